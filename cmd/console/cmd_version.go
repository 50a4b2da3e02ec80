package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=…". A
// plain `go build` leaves it "dev", and buildVersion asks the binary's
// build information instead.
var version = "dev"

func runVersion(_ context.Context, e env, args []string) error {
	fs := newFlags("version", nil)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("version takes no arguments (%s): console version", strings.Join(rest, " "))
	}
	fmt.Fprintln(e.stdout, buildVersion())
	return nil
}

// buildVersion is the one answer to "which build is this?": `console
// version` prints it and the MCP servers (stdio and /mcp) report it.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionOf(version, info, ok)
}

// versionOf prefers the version stamped with -ldflags; then the main
// module's version (set by `go install module@version`, and by `go build`
// in a git checkout since Go 1.24); then the commit it was built from;
// and says "dev" only when nothing better is known.
func versionOf(stamped string, info *debug.BuildInfo, ok bool) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	if !ok || info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision == "" {
		return "dev"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified == "true" {
		revision += "+dirty"
	}
	return "dev-" + revision
}
