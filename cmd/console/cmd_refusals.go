package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

func runRefusals(ctx context.Context, e env, args []string) error {
	var db, kind, ticket, search string
	var asJSON, would bool
	limit := 50
	fs := newFlags("refusals", &db)
	fs.BoolVar(&asJSON, "json", false, "print the refusals as JSON")
	fs.StringVar(&kind, "kind", "", "show only `policy` refusals or network failures (network)")
	fs.Var(boundedInt{&limit, "limit", 1, "give 1 to 500, e.g. --limit 50"}, "limit", "show the newest `N` refusals, at most 500")
	fs.StringVar(&ticket, "ticket", "", "show only the refusals of the help-desk ticket `ID`, as the agent sent it")
	fs.StringVar(&search, "search", "", "show only refusals whose URL, redirects, message or trigger hold every one of these `WORDS`, in any case")
	fs.BoolVar(&would, "would-refuse", false, "show the requests report-only entries would have refused (they were allowed) instead of refusals")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("refusals takes no arguments; use --limit N, --kind, --ticket ID, --search WORDS, --would-refuse and --json")
	}
	if would && kind != "" {
		return usagef("--kind does not apply to --would-refuse: those requests were allowed, none failed on the network; leave out --kind")
	}
	if kind != "" && !slices.Contains(guard.Kinds, guard.Kind(kind)) {
		return usagef("--kind %q is not a kind; use --kind policy (refused by the policy) or --kind network (the network failed)", kind)
	}
	if err := guard.CheckTicket(ticket); err != nil {
		te := err.(*guard.TicketError)
		return usagef("--ticket %q: %s %s", ticket, te.Message, te.Fix)
	}
	if _, err := models.SearchWords(search); err != nil {
		return usagef("--search: %s", tools.Sentence(err.Error()))
	}
	if limit > models.MaxRefusalPage {
		return usagef("--limit %d is over %d; page through the console's refusal log for more", limit, models.MaxRefusalPage)
	}
	store, err := openStore(db, mustExist)
	if err != nil {
		return err
	}
	defer store.Close()
	if would {
		return printWouldRefusals(ctx, e, store, models.RefusalQuery{Ticket: ticket, Search: search}, limit, asJSON)
	}
	rows, err := newestRefusals(ctx, store, models.RefusalQuery{Kind: kind, Ticket: ticket, Search: search}, limit)
	if err != nil {
		return err
	}
	if asJSON {
		// The log's typed value, as the console's pages and CSV read it:
		// lists are JSON arrays, the remedy an object, the kind spelt out.
		out := make([]app.LoggedRefusal, len(rows))
		for i, r := range rows {
			out[i] = app.LoggedRefusalOf(r)
		}
		return writeJSON(e.stdout, out, true)
	}
	if len(rows) == 0 {
		fmt.Fprintln(e.stdout, "No refusals yet.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTOOL\tAGENT\tTICKET\tKIND\tCODE\tREASON\tURL\tMESSAGE\tREMEDY")
	// A refused URL is whatever an agent, a page or a redirect chose, and
	// the message and remedy quote it: every cell is shown on one line
	// with its control characters escaped.
	for _, row := range rows {
		r := app.LoggedRefusalOf(row)
		message := r.Message
		if red := r.Redirected(); red != "" {
			message += " " + red
		}
		if r.Count > 1 { // an aggregated row: a burst of alike refusals
			message = fmt.Sprintf("×%d alike requests. %s", r.Count, message)
		}
		cells := []string{r.Time.Local().Format("2006-01-02 15:04:05"), toolText(r.Tool, r.Service), dash(r.Agent), dash(r.Ticket),
			string(r.KindOf()), string(r.Code), string(r.Reason), r.URL, message, dash(tools.RemedyText(r.Remedy))}
		for i, c := range cells {
			cells[i] = safeLine(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// toolText is the TOOL cell: the tool, and the integration a
// call_integration call was made for.
func toolText(tool, integration string) string {
	if integration != "" {
		return tool + " (" + integration + ")"
	}
	return dash(tool)
}

// printWouldRefusals prints the newest limit would-be refusals matching q:
// requests that were allowed, but that report-only entries would have
// refused.
func printWouldRefusals(ctx context.Context, e env, store *models.Store, q models.RefusalQuery, limit int, asJSON bool) error {
	var out []app.LoggedWouldRefusal
	for {
		q.Limit = limit - len(out)
		rows, next, err := store.ListWouldRefusals(ctx, q)
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, app.LoggedWouldRefusalOf(r))
		}
		if next == 0 || len(out) >= limit {
			break
		}
		q.BeforeID = next
	}
	if asJSON {
		if out == nil {
			out = []app.LoggedWouldRefusal{}
		}
		return writeJSON(e.stdout, out, true)
	}
	if len(out) == 0 {
		fmt.Fprintln(e.stdout, "No request was allowed that report-only entries would have refused.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTOOL\tAGENT\tTICKET\tCODE\tREASON\tURL\tMESSAGE")
	for _, r := range out {
		cells := []string{r.Time.Local().Format("2006-01-02 15:04:05"), toolText(r.Tool, r.Service), dash(r.Agent), dash(r.Ticket), r.Code, r.Reason, r.URL, r.Message}
		for i, c := range cells {
			cells[i] = safeLine(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// newestRefusals is the newest limit refusals matching q. A search reads
// the log a window at a time (models.RefusalQuery.Search), so pages that
// end short are followed until limit rows are found or the log ends.
func newestRefusals(ctx context.Context, store *models.Store, q models.RefusalQuery, limit int) ([]models.Refusal, error) {
	var out []models.Refusal
	for {
		q.Limit = limit - len(out)
		rows, next, err := store.ListRefusals(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if next == 0 || len(out) >= limit {
			return out, nil
		}
		q.BeforeID = next
	}
}
