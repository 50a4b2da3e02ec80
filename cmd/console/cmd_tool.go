package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
)

// runTool calls one tool of the registry, fetch_url, take_screenshot,
// call_integration or an integration's own tool, through the same call
// path as MCP and the API: the input is checked against the tool's schema
// and the call is recorded once. take_screenshot's image goes to the file
// --out names; the screenshot proxies start only for that tool, so other
// calls open no listener.
func runTool(ctx context.Context, e env, args []string) error {
	var db, out string
	var asJSON bool
	fs := newFlags("tool", &db)
	fs.BoolVar(&asJSON, "json", false, "print the API's JSON answer")
	fs.StringVar(&out, "out", "", "write the tool's image to `FILE.png` (take_screenshot)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) < 1 || len(rest) > 2 {
		return usagef(`give a tool and its input as one JSON object: console tool fetch_url '{"url": "https://status.example.com/"}'`)
	}
	name, input := rest[0], "{}"
	if len(rest) == 2 {
		input = rest[1]
	}
	if !json.Valid([]byte(input)) {
		return usagef("the input %s is not JSON; write it as one object in single quotes, e.g. '{\"url\": \"https://status.example.com/\"}'", input)
	}
	if err := checkOut(name, out); err != nil {
		return err
	}
	a, err := openApp(ctx, db, app.Options{MustExist: true})
	if err != nil {
		return err
	}
	defer a.Close()
	deps := tools.Deps{Guard: a.Guard(), Settings: a.Settings, Integrations: a.Integrations()}
	if name == tools.TakeScreenshotName || tools.IsBrowserTool(name) {
		shots, stop, err := a.Screenshots()
		if err != nil {
			return err
		}
		defer stop()
		deps.Shots = shots
		if tools.IsBrowserTool(name) {
			// One command is one call: its tab lives as long as the
			// process, so browser_open reads a page, and the other
			// browser tools answer that no page is open in this call.
			tabs := tools.NewTabs(shots, a.Settings)
			defer tabs.Close()
			deps.Browser = tabs
		}
	}
	reg := tools.Builtin(deps)
	ctx = tools.WithConfirmer(ctx, terminalConfirmer(e.stdin, e.stderr, isTerminal(e.stdin)))
	res, err := reg.Call(ctx, tools.Call{Tool: name, Turn: tools.Turn{Agent: actor(), Thread: "cli"}, Args: json.RawMessage(input), From: "input"})
	var unknown *tools.UnknownToolError
	if errors.As(err, &unknown) {
		known := unknown.Known
		if deps.Shots == nil {
			known = append(known, tools.TakeScreenshotName) // served when named
		}
		return usagef("there is no tool %s here; use one of: %s", unknown.Name, strings.Join(known, ", "))
	}
	if err != nil {
		return err
	}
	if len(res.PNG) > 0 {
		if err := os.WriteFile(out, res.PNG, 0o644); err != nil {
			return fmt.Errorf("the screenshot was taken but %s could not be written: %w; choose a writable path with --out", out, err)
		}
	}
	return printToolResult(e, res, asJSON, out)
}

// printToolResult prints a tool's answer as the agent reads it (or the
// API's JSON) and exits 3 when the tool refused; console fetch and
// console tool print the same way. A fix the agent is not shown goes to
// stderr for the admin (printAdminFix).
func printToolResult(e env, res tools.Result, asJSON bool, imageFile string) error {
	// The answer holds the page's (or the service's) own text: its
	// control characters are shown, not sent to the terminal.
	if asJSON {
		if err := writeJSON(e.stdout, res.API, true); err != nil {
			return err
		}
	} else {
		fmt.Fprint(e.stdout, safeText(res.Text))
		if len(res.PNG) > 0 {
			fmt.Fprintf(e.stdout, "\nWrote the image to %s (%d bytes).\n", imageFile, len(res.PNG))
		}
	}
	if !res.OK() {
		printAdminFix(e.stderr, res.Refusal)
		return refusedError{}
	}
	return nil
}

// checkOut refuses a call whose image would be lost, or an --out that no
// image would fill, before the tool runs.
func checkOut(name, out string) error {
	image := name == tools.TakeScreenshotName // the one tool that answers an image
	switch {
	case image && out == "":
		return usagef(`%s answers an image: give --out FILE.png to write it, e.g. console tool --out status.png %s '{"url": "https://status.example.com/"}'`, name, name)
	case !image && out != "":
		return usagef("--out writes a tool's image, and %s answers none; leave --out out (only %s takes it)", name, tools.TakeScreenshotName)
	case image:
		if dir := filepath.Dir(out); !isDir(dir) {
			return usagef("--out %s: the folder %s does not exist; give a path in an existing folder", out, dir)
		}
	}
	return nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
