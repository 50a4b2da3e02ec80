package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
)

// runTicket prints a ticket's timeline: its allowed and refused decisions,
// oldest first, as the console's ticket page shows them.
func runTicket(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("ticket", &db)
	fs.BoolVar(&asJSON, "json", false, "print the timeline as JSON")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("ticket takes one ticket ID, e.g. console ticket %s", guard.TicketExample)
	}
	ticket := rest[0]
	if err := guard.CheckTicket(ticket); err != nil || ticket == "" {
		var te *guard.TicketError
		if errors.As(err, &te) {
			return usagef("%q is not a ticket: %s %s", ticket, te.Message, te.Fix)
		}
		return usagef("the ticket is empty; give one, e.g. console ticket %s", guard.TicketExample)
	}
	a, err := openApp(ctx, db, app.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer a.Close()
	tl, err := a.TicketTimeline(ctx, ticket)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, tl, true)
	}
	if len(tl.Events) == 0 {
		fmt.Fprintf(e.stdout, "No decision of ticket %s is stored. The ticket matches exactly as the agent sent it.\n", safeLine(ticket))
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tOUTCOME\tTOOL\tAGENT\tCODE\tURL\tREFUSAL")
	for _, ev := range tl.Events {
		code := ev.Code
		if ev.Reason != "" {
			code += " (" + ev.Reason + ")"
		}
		url := ev.URL
		if ev.Redirected != "" {
			url += " — " + ev.Redirected
		}
		ref := "-"
		if ev.RefusalID != 0 {
			ref = fmt.Sprintf("#%d", ev.RefusalID)
		}
		tool := ev.Tool
		if ev.Proxied {
			tool += " (proxy)"
		}
		cells := []string{ev.Time.Local().Format("2006-01-02 15:04:05"), ev.Outcome, dash(tool), dash(ev.Agent), dash(code), url, ref}
		for i, c := range cells {
			cells[i] = safeLine(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if tl.Truncated {
		fmt.Fprintln(e.stdout, "Older decisions of this ticket are left out: these are its latest. `console refusals --ticket "+safeLine(ticket)+" --limit 500` lists its refusals.")
	}
	if tl.DecisionDays == 0 {
		fmt.Fprintln(e.stdout, "Allowed requests are not stored (decision_retention_days is 0): only refusals show.")
	}
	return nil
}
