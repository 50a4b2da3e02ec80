package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboundhq/outbound/models"
)

// refusalJSON is the refusal as the CLI and the API show it: the guard's
// value (code, reason, message, fix) with its context.
type refusalJSON struct {
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	Tool      string    `json:"tool"`
	URL       string    `json:"url"`
	Host      string    `json:"host"`
	Port      int       `json:"port"`
	Addresses []string  `json:"addresses"`
	Code      string    `json:"code"`
	Reason    string    `json:"reason"`
	Message   string    `json:"message"`
	Fix       string    `json:"fix"`
	Entry     string    `json:"entry,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Thread    string    `json:"thread,omitempty"`
	Trigger   string    `json:"trigger,omitempty"`
	Redirects []string  `json:"redirects"`
	Status    string    `json:"status,omitempty"`
	Comment   string    `json:"comment,omitempty"`
}

func toRefusalJSON(r models.Refusal) refusalJSON {
	return refusalJSON{
		ID: r.ID, Time: r.Time.UTC(), Tool: r.Tool, URL: r.URL, Host: r.Host, Port: r.Port,
		Addresses: splitNonEmpty(r.Addresses, ","), Code: r.Code, Reason: r.Reason, Message: r.Message, Fix: r.Fix,
		Entry: r.Entry, Agent: r.Agent, Thread: r.Thread, Trigger: r.Trigger,
		Redirects: splitNonEmpty(r.Redirects, "\n"), Status: string(r.Status), Comment: r.Comment,
	}
}

func splitNonEmpty(s, sep string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, sep)
}

func runRefusals(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	limit := 50
	fs := newFlags("refusals", &db)
	fs.BoolVar(&asJSON, "json", false, "print the refusals as JSON")
	fs.Var(boundedInt{&limit, "limit", 1, "give 1 to 500, e.g. --limit 50"}, "limit", "show the newest `N` refusals, at most 500")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("refusals takes no arguments; use --limit N and --json")
	}
	if limit > models.MaxRefusalPage {
		return usagef("--limit %d is over %d; page through the console's refusal log for more", limit, models.MaxRefusalPage)
	}
	store, err := openStore(db, mustExist)
	if err != nil {
		return err
	}
	defer store.Close()
	rows, _, err := store.ListRefusals(ctx, models.RefusalQuery{Limit: limit})
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]refusalJSON, len(rows))
		for i, r := range rows {
			out[i] = toRefusalJSON(r)
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	if len(rows) == 0 {
		fmt.Fprintln(e.stdout, "No refusals yet.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTOOL\tAGENT\tCODE\tREASON\tURL\tMESSAGE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Local().Format("2006-01-02 15:04:05"), dash(r.Tool), dash(r.Agent), r.Code, r.Reason, r.URL, r.Message)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
