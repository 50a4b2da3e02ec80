package main

import (
	"context"
	"errors"
	"flag"
	"slices"
	"strings"
)

// helpRequest is what -h or --help returns instead of running the
// command: run prints the command's usage, summary and these flag sets on
// stdout and exits 0. A command with subcommands may gather several sets.
type helpRequest struct{ sets []*flag.FlagSet }

func (*helpRequest) Error() string { return "help requested" }

func isHelpArg(a string) bool { return a == "-h" || a == "--h" || a == "-help" || a == "--help" }

// commandHelp is one command's usage lines, summary and flags. When a
// command gathered several flag sets (one per subcommand), each is titled
// with its subcommand.
func commandHelp(name string, cmd command, help *helpRequest) string {
	var b strings.Builder
	for i, line := range strings.Split(cmd.usage, "\n") {
		if i == 0 {
			b.WriteString("usage: console " + line + "\n")
		} else {
			b.WriteString("       console " + line + "\n")
		}
	}
	b.WriteString("\n" + cmd.summary + "\n")
	for _, fs := range help.sets {
		title := "flags"
		if len(help.sets) > 1 {
			title = "flags of console " + fs.Name()
		}
		if text := flagHelp(fs, title); text != "" {
			b.WriteString("\n" + text)
		}
	}
	return b.String()
}

// subcommand is one subcommand of a group whose subcommands each parse
// their own flags (allow, user, integrations): its names, the first as
// help shows it and then its aliases, and what it runs.
type subcommand struct {
	names []string
	run   func(context.Context, env, []string) error
}

// dispatch runs the subcommand args[0] names. The table is the one list of
// a group's subcommands: dispatching, help and the error for an unknown
// name all read it.
func dispatch(ctx context.Context, e env, args []string, usage string, subs []subcommand) error {
	if len(args) == 0 {
		return usagef("name a subcommand: %s", oneLineUsage(usage))
	}
	if isHelpArg(args[0]) || args[0] == "help" {
		return gatherHelp(ctx, e, subs)
	}
	for _, sub := range subs {
		if slices.Contains(sub.names, args[0]) {
			return sub.run(ctx, e, args[1:])
		}
	}
	if strings.HasPrefix(args[0], "-") {
		return usagef("name a subcommand before the flags: %s", oneLineUsage(usage))
	}
	return usagef("unknown subcommand %q: %s", args[0], oneLineUsage(usage))
}

// gatherHelp asks each subcommand for its help and returns one request
// holding all their flag sets, so `console allow --help` lists the flags
// of allow add, allow rm and allow list, each as the subcommand defines
// them.
func gatherHelp(ctx context.Context, e env, subs []subcommand) error {
	all := &helpRequest{}
	for _, sub := range subs {
		var help *helpRequest
		if err := sub.run(ctx, e, []string{"--help"}); !errors.As(err, &help) {
			return err
		}
		all.sets = append(all.sets, help.sets...)
	}
	return all
}

// parseSubcommand parses a command group whose subcommands share one
// flag set (settings, token), so flags may stand before the subcommand
// too, and returns the subcommand and its arguments. --json, when given,
// belongs to the list subcommand only.
func parseSubcommand(fs *flag.FlagSet, args []string, usage string) (sub string, rest []string, err error) {
	rest, err = parseArgs(fs, args)
	if err != nil {
		return "", nil, err
	}
	if len(rest) == 0 {
		return "", nil, usagef("name a subcommand: %s", oneLineUsage(usage))
	}
	sub, rest = rest[0], rest[1:]
	if f := fs.Lookup("json"); f != nil && f.Value.String() == "true" && sub != "list" && sub != "ls" {
		return "", nil, usagef("--json applies to console %s list only", fs.Name())
	}
	return sub, rest, nil
}

// oneLineUsage joins a multi-line usage for an error message:
// "console allow add … | console allow rm …".
func oneLineUsage(usage string) string {
	return "console " + strings.ReplaceAll(usage, "\n", " | console ")
}
