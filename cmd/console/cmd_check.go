package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
)

func runCheck(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("check", &db)
	fs.BoolVar(&asJSON, "json", false, "print the decision as JSON")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("give exactly one URL: console check [--json] URL")
	}
	a, err := openApp(ctx, db, app.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer a.Close()
	d := a.Guard().Decide(ctx, rest[0])
	if asJSON {
		if err := writeJSON(e.stdout, d, false); err != nil {
			return err
		}
	} else {
		printDecision(e.stdout, &d, a.Guard().Policy().PublicWeb())
	}
	if !d.Allowed {
		return refusedError{}
	}
	return nil
}

// printDecision prints a decision one field a line. The URL is the input
// as given (a pasted URL may carry control characters), and the message
// quotes it, so each field is shown with its control characters escaped.
func printDecision(w io.Writer, d *guard.Decision, publicWeb bool) {
	url := d.Input
	if d.URL != nil {
		url = d.URL.String()
	}
	url = safeLine(url)
	if d.Allowed {
		fmt.Fprintf(w, "allowed  %s\n", url)
		switch {
		case !d.Entry.IsZero():
			fmt.Fprintf(w, "  entry:     %s\n", d.Entry)
		case publicWeb:
			fmt.Fprintf(w, "  entry:     none needed (PUBLIC WEB)\n")
		}
	} else {
		fmt.Fprintf(w, "refused  %s\n", url)
		fmt.Fprintf(w, "  code:      %s (%s)\n", d.Code, d.Reason)
		fmt.Fprintf(w, "  message:   %s\n", safeLine(d.Message))
		fmt.Fprintf(w, "  fix:       %s\n", safeLine(d.Fix))
		if !d.Entry.IsZero() {
			fmt.Fprintf(w, "  entry:     %s\n", d.Entry)
		}
	}
	if addrs := d.Addresses(); len(addrs) > 0 {
		parts := make([]string, len(addrs))
		for i, a := range addrs {
			parts[i] = a.String()
		}
		fmt.Fprintf(w, "  addresses: %s\n", strings.Join(parts, ", "))
	}
}
