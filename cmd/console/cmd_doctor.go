package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/tools/browser"
)

// runDoctor checks, one piece at a time, what the console needs: the
// database, the browser setting, and each piece of the browser (Chromium,
// node, the Playwright driver and its version, a real launch), printing
// where each was found or the exact fix. It exits 1 when something the
// settings need is broken: the database always, the browser when the
// browser tools are on. take_screenshot needs the browser too, so a
// broken browser is a warning even while the browser tools are off.
func runDoctor(ctx context.Context, e env, args []string) error {
	var db string
	var noLaunch bool
	fs := newFlags("doctor", &db)
	fs.BoolVar(&noLaunch, "no-launch", false, "check the browser's pieces without starting Chromium")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("doctor takes no arguments: console doctor [--db PATH] [--no-launch]")
	}
	broken := 0
	mode := tools.BrowserOff
	a, err := openApp(ctx, db, app.Options{ReadOnly: true})
	if err != nil {
		broken++
		printCheck(e.stdout, "FAIL", "database", err.Error(), "")
	} else {
		mode = a.Settings().Browser
		a.Close()
		printCheck(e.stdout, "ok", "database", db+" opens", "")
		printCheck(e.stdout, "ok", "browser setting", string(mode)+": "+browserModeWords(mode), "")
	}

	needed := mode != tools.BrowserOff
	browserBroken := false
	for _, c := range browser.Checks(!noLaunch) {
		switch {
		case c.OK():
			printCheck(e.stdout, "ok", c.Name, c.Found, "")
		case c.Skipped:
			browserBroken = true
			printCheck(e.stdout, "skip", c.Name, "not checked: "+c.Err.Error(), "")
		default:
			browserBroken = true
			printCheck(e.stdout, "FAIL", c.Name, problemWords(c.Err), c.Fix)
		}
	}
	if browserBroken {
		if needed {
			broken++
			fmt.Fprintf(e.stdout, "\nThe browser tools are on (browser = %s) but the browser cannot work: agents are told it is not available.\n", mode)
		} else {
			fmt.Fprintln(e.stdout, "\nThe browser cannot work here: take_screenshot answers that it is not available. The browser tools are off, so nothing else needs it.")
		}
	}
	if broken > 0 {
		return fmt.Errorf("%d of the checks above %s fixing", broken, map[bool]string{true: "needs", false: "need"}[broken == 1])
	}
	if browserBroken {
		fmt.Fprintln(e.stdout, "Everything the settings need works.")
	} else {
		fmt.Fprintln(e.stdout, "\nEverything works.")
	}
	return nil
}

// printCheck prints one check: its status (ok, FAIL, skip), the piece,
// what was found or what is wrong, and the fix indented under it.
func printCheck(w io.Writer, status, name, line, fix string) {
	fmt.Fprintf(w, "%-4s  %-18s %s\n", status, name, safeLine(line))
	for i, l := range strings.Split(fix, "\n") {
		if l == "" {
			continue
		}
		lead := "      fix: "
		if i > 0 {
			lead = "      "
		}
		fmt.Fprintf(w, "%s%s\n", lead, safeLine(l))
	}
}

// problemWords says what is wrong without the set-up error's own advice,
// which the check's fix replaces.
func problemWords(err error) string {
	var missing *browser.MissingError
	if errors.As(err, &missing) {
		return "not found; looked in " + strings.Join(missing.Looked, ", ")
	}
	return strings.TrimPrefix(err.Error(), "browser: ")
}

func browserModeWords(m tools.BrowserMode) string {
	switch m {
	case tools.BrowserConfirm:
		return "the browser tools are offered; typing and submitting need a person's confirmation once a conversation has read the web"
	case tools.BrowserReadOnly:
		return "the browser tools are offered, without typing or submitting"
	}
	return "the browser tools are not offered"
}

// warnBrowserBroken logs one line at serve and mcp start when the browser
// tools are on but a piece of the browser is missing: an admin learns it
// from the log, not from an agent's refusal.
func warnBrowserBroken(log *slog.Logger, mode tools.BrowserMode) {
	if mode == tools.BrowserOff {
		return
	}
	if err := browser.Available(); err != nil {
		log.Warn("the browser tools are on but the browser cannot work; run `console doctor` for the fix", "browser", string(mode), "problem", problemWords(err))
	}
}
