package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// waitTimeline polls a ticket's timeline until it has n events: rows are
// written in batches, off the decision's path.
func waitTimeline(t *testing.T, a *App, ticket string, n int) Timeline {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tl, err := a.TicketTimeline(context.Background(), ticket)
		if err != nil {
			t.Fatal(err)
		}
		if len(tl.Events) >= n || time.Now().After(deadline) {
			if len(tl.Events) != n {
				t.Fatalf("timeline of %s has %d events, want %d: %+v", ticket, len(tl.Events), n, tl.Events)
			}
			return tl
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTicketTimelineMergesAllowedAndRefused: the one sink stores allowed
// decisions in the decisions store and refusals in the refusal log, each
// with its ticket, and a ticket's timeline is both, in time order, with
// each refusal linked and a redirect worded; other tickets stay out.
func TestTicketTimelineMergesAllowedAndRefused(t *testing.T) {
	ta := openTestApp(t)
	g := ta.Guard()
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	sup := guard.Caller{Tool: "fetch_url", Agent: "bot", Thread: "T-1", Ticket: "SUP-7"}
	g.Record(guard.Record{Time: t0, Caller: sup, URL: "https://status.example.com/", Host: "status.example.com", Port: 443})
	g.Record(guard.Record{Time: t0.Add(time.Minute), Caller: sup, URL: "http://10.0.0.1/", Host: "10.0.0.1", Port: 80,
		Redirects: []string{"https://short.example/x"},
		Refusal:   &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalAddress, URL: "http://10.0.0.1/", Host: "10.0.0.1", Message: "Internal."}})
	g.Record(guard.Record{Time: t0.Add(2 * time.Minute), Caller: sup, URL: "https://slow.example/", Host: "slow.example",
		Refusal: &guard.Refusal{Code: guard.CodeTimeout, Reason: guard.ReasonTimeout, Kind: guard.KindNetwork, URL: "https://slow.example/", Message: "Too slow."}})
	g.Record(guard.Record{Time: t0.Add(3 * time.Minute), Caller: guard.Caller{Tool: "proxy", Agent: "bot", Ticket: "SUP-7"}, URL: "https://cdn.example/a.js", Host: "cdn.example", Proxied: true, Cached: false})
	g.Record(guard.Record{Time: t0.Add(30 * time.Second), Caller: guard.Caller{Tool: "fetch_url", Ticket: "SUP-8"}, URL: "https://other.example/"})
	g.Record(guard.Record{Time: t0.Add(40 * time.Second), Caller: guard.Caller{Tool: "fetch_url"}, URL: "https://none.example/"})

	tl := waitTimeline(t, ta.App, "SUP-7", 4)
	want := []struct{ outcome, url string }{
		{OutcomeAllowed, "https://status.example.com/"}, {OutcomeRefused, "http://10.0.0.1/"},
		{OutcomeFailed, "https://slow.example/"}, {OutcomeAllowed, "https://cdn.example/a.js"},
	}
	for i, w := range want {
		if e := tl.Events[i]; e.Outcome != w.outcome || e.URL != w.url {
			t.Errorf("event %d: %s %s, want %s %s", i, e.Outcome, e.URL, w.outcome, w.url)
		}
	}
	if e := tl.Events[1]; e.RefusalID == 0 || e.Code != "forbidden" || e.Redirected != "Redirected from https://short.example/x to http://10.0.0.1/." || e.Thread != "T-1" {
		t.Errorf("the refusal's event: %+v", e)
	}
	if e := tl.Events[3]; !e.Proxied || e.Tool != "proxy" || e.RefusalID != 0 {
		t.Errorf("the proxied allowed event: %+v", e)
	}
	if tl.Truncated || tl.DecisionDays != 7 || tl.RefusalDays != 30 || tl.Ticket != "SUP-7" {
		t.Errorf("timeline facts: %+v", tl)
	}
	if _, err := ta.TicketTimeline(context.Background(), "a/b"); err == nil {
		t.Error("a ticket no agent could send was read")
	} else if te := (*guard.TicketError)(nil); !errors.As(err, &te) || te.Fix == "" {
		t.Errorf("a malformed ticket: %v", err)
	}
	if _, err := ta.TicketTimeline(context.Background(), ""); !errors.Is(err, ErrNoTicket) {
		t.Errorf("an empty ticket: %v", err)
	}
}

// TestDecisionRetentionZeroStoresNone: with decision_retention_days 0 an
// allowed decision is not even queued, and the purge empties the store.
func TestDecisionRetentionZeroStoresNone(t *testing.T) {
	ta := openTestApp(t)
	g := ta.Guard()
	g.Record(guard.Record{Caller: guard.Caller{Tool: "fetch_url", Ticket: "SUP-1"}, URL: "https://a.example/"})
	waitTimeline(t, ta.App, "SUP-1", 1)
	if _, err := ta.SetSettings(context.Background(), SetSettings{Actor: "ada", Version: models.AnyRevision, Values: map[string]string{"decision_retention_days": "0"}}); err != nil {
		t.Fatal(err)
	}
	w := ta.decisions.(*models.DecisionWriter)
	before := w.Stats()
	g.Record(guard.Record{Caller: guard.Caller{Tool: "fetch_url", Ticket: "SUP-1"}, URL: "https://b.example/"})
	if after := w.Stats(); after.Queued != 0 || after.Written != before.Written || after.Dropped != before.Dropped {
		t.Fatalf("with the store off, a decision was queued: %+v then %+v", before, after)
	}
	ta.purgeDecisions(context.Background())
	tl := waitTimeline(t, ta.App, "SUP-1", 0)
	if tl.DecisionDays != 0 {
		t.Fatalf("timeline facts: %+v", tl)
	}
}
