package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
)

// TestTicketCLI: `console ticket ID` prints the ticket's allowed and
// refused decisions in order (and --json the same timeline), `console
// refusals --ticket --search` finds its refusals, and a malformed ticket
// is a usage error with the fix.
func TestTicketCLI(t *testing.T) {
	db := existingDB(t)
	a, err := app.Open(context.Background(), db, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	sup := guard.Caller{Tool: "fetch_url", Agent: "helpdesk", Ticket: "SUP-9"}
	a.Guard().Record(guard.Record{Time: t0, Caller: sup, URL: "https://status.example.com/", Host: "status.example.com"})
	a.Guard().Record(guard.Record{Time: t0.Add(time.Minute), Caller: sup, URL: "http://10.0.0.1/admin", Redirects: []string{"https://short.example/s"},
		Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalAddress, URL: "http://10.0.0.1/admin", Message: "A private address."}})
	a.Guard().Record(guard.Record{Time: t0.Add(2 * time.Minute), Caller: guard.Caller{Tool: "fetch_url", Ticket: "SUP-10"},
		Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, URL: "https://other.example/", Message: "Not listed."}})
	if err := a.Close(); err != nil { // flushes the queued rows
		t.Fatal(err)
	}

	r := runCLI(t, "ticket", "--db", db, "SUP-9")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "allowed") || !strings.Contains(lines[1], "https://status.example.com/") ||
		!strings.Contains(lines[2], "refused") || !strings.Contains(lines[2], "Redirected from https://short.example/s to http://10.0.0.1/admin.") ||
		strings.Contains(r.stdout, "other.example") {
		t.Fatalf("console ticket SUP-9: %+v", r)
	}
	r = runCLI(t, "ticket", "--json", "--db", db, "SUP-9")
	var tl app.Timeline
	if err := json.Unmarshal([]byte(r.stdout), &tl); err != nil || len(tl.Events) != 2 || tl.Events[1].RefusalID == 0 || tl.Events[0].Outcome != app.OutcomeAllowed {
		t.Fatalf("console ticket --json: %v %+v", err, r)
	}

	r = runCLI(t, "refusals", "--db", db, "--ticket", "SUP-9", "--search", "PRIVATE address")
	if r.code != 0 || !strings.Contains(r.stdout, "SUP-9") || !strings.Contains(r.stdout, "10.0.0.1") || strings.Contains(r.stdout, "other.example") ||
		!strings.Contains(r.stdout, "Redirected from https://short.example/s") {
		t.Fatalf("refusals --ticket --search: %+v", r)
	}
	if r := runCLI(t, "refusals", "--db", db, "--search", "no-such-words"); r.code != 0 || !strings.Contains(r.stdout, "No refusals") {
		t.Fatalf("a search that finds nothing: %+v", r)
	}
	for _, args := range [][]string{{"ticket", "--db", db, "SUP 9"}, {"refusals", "--db", db, "--ticket", "a/b"}, {"ticket", "--db", db}} {
		if r := runCLI(t, args...); r.code != 2 || r.stderr == "" {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if r := runCLI(t, "ticket", "--db", db, "SUP 9"); !strings.Contains(r.stderr, guard.TicketExample) {
		t.Errorf("a malformed ticket's error has no fix: %q", r.stderr)
	}
}
