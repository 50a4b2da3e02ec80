package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// A preview is one call through the registry, recorded once by the one
// sink like an agent's (with the ticket), and audited; a request the form
// cannot use reads, records and audits nothing.
func TestPreviewIsOneRecordedAndAuditedCall(t *testing.T) {
	ctx := context.Background()
	tee := &teeRecords{}
	a, err := Open(ctx, filepath.Join(t.TempDir(), "console.db"), Options{
		Resolver: guardtest.NewResolver(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv, Metrics: tee,
	})
	if err != nil {
		t.Fatal(err)
	}
	tee.refusalRows = a.refusals
	a.refusals = tee
	t.Cleanup(func() { a.Close() })
	var hits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>Status</title></head><body><main><p>All systems operational, and have been for a week now without a single incident.</p></main></body></html>")
	}))
	defer site.Close()
	if _, err := a.AddEntries(ctx, AddEntries{Entries: []string{strings.TrimPrefix(site.URL, "http://")}, Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	p := a.Previews(tools.Builtin(tools.Deps{Guard: a.Guard(), Settings: a.Settings}))

	n, m := tee.counts()
	got, err := p.Preview(ctx, PreviewRequest{Actor: "sam", URL: " " + site.URL + "/ ", Ticket: "HD-4711"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Refusal != nil || !strings.Contains(got.Text, "All systems operational") || !got.NoBrowser || hits.Load() != 1 {
		t.Fatalf("preview = %+v (hits %d)", got, hits.Load())
	}
	recs, rows := tee.since(n, m)
	if len(recs) != 1 || len(rows) != 0 {
		t.Fatalf("%d records and %d refusal rows, want one allowed record", len(recs), len(rows))
	}
	c := recs[0].Caller
	if c.Agent != "console:sam" || c.Thread != PreviewThread || c.Ticket != "HD-4711" || c.Tool != tools.FetchURLName {
		t.Fatalf("record caller = %+v", c)
	}

	// Refused: the refusal as admins see it (not the agent's wording),
	// one row, audited as refused.
	n, m = tee.counts()
	got, err = p.Preview(ctx, PreviewRequest{Actor: "sam", URL: "http://169.254.169.254/latest/meta-data/"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Refusal == nil || got.Refusal.Reason != guard.ReasonMetadata || got.Refusal.Fix == guard.AgentMetadataFix {
		t.Fatalf("refused preview = %+v", got)
	}
	if recs, rows = tee.since(n, m); len(recs) != 1 || len(rows) != 1 || rows[0].Agent != "console:sam" {
		t.Fatalf("refused preview: %d records, %d rows", len(recs), len(rows))
	}

	// Unusable input: nothing at all.
	n, m = tee.counts()
	_, err = p.Preview(ctx, PreviewRequest{Actor: "sam", URL: "status.example.com", Ticket: strings.Repeat("x", MaxPreviewTicket+1)})
	var problems PreviewProblems
	if !errors.As(err, &problems) || !strings.Contains(problems["url"], "https://status.example.com") || problems["ticket"] == "" {
		t.Fatalf("err = %v", err)
	}
	// A ticket the timeline and `console ticket` would not accept is
	// refused here too, or the preview could never be found by it.
	_, err = p.Preview(ctx, PreviewRequest{Actor: "sam", URL: site.URL + "/", Ticket: "HD 4711"})
	if !errors.As(err, &problems) || !strings.Contains(problems["ticket"], "e.g. "+guard.TicketExample) {
		t.Fatalf("a ticket with a space: %v", err)
	}
	if recs, rows = tee.since(n, m); len(recs) != 0 || len(rows) != 0 {
		t.Fatal("a preview that read nothing was recorded")
	}
	audits, _, err := a.Store().ListAudit(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var previews []string
	for _, r := range audits {
		if r.Action == ActionPreview {
			previews = append(previews, r.Actor+" "+r.Target+" "+r.After)
		}
	}
	want := []string{
		"sam http://169.254.169.254/latest/meta-data/ refused: forbidden (metadata)",
		"sam " + site.URL + "/ ticket HD-4711; read",
	}
	if strings.Join(previews, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit:\n%s\nwant:\n%s", strings.Join(previews, "\n"), strings.Join(want, "\n"))
	}
}

// A preview with a ticket id is in that ticket's timeline, read or
// refused, under the console user's agent name.
func TestPreviewsAppearInTheTicketTimeline(t *testing.T) {
	ctx := context.Background()
	a, err := Open(ctx, filepath.Join(t.TempDir(), "console.db"), Options{
		Resolver: guardtest.NewResolver(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>Status</title></head><body><main><p>All systems operational, and have been for a week now without a single incident.</p></main></body></html>")
	}))
	defer site.Close()
	if _, err := a.AddEntries(ctx, AddEntries{Entries: []string{strings.TrimPrefix(site.URL, "http://")}, Internal: true, Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	p := a.Previews(tools.Builtin(tools.Deps{Guard: a.Guard(), Settings: a.Settings}))
	for _, u := range []string{site.URL + "/", "http://169.254.169.254/latest/meta-data/"} {
		if _, err := p.Preview(ctx, PreviewRequest{Actor: "sam", URL: u, Ticket: "HD-4830"}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		tl, err := a.TicketTimeline(ctx, "HD-4830")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range tl.Events {
			got = append(got, e.Outcome+" "+e.Agent+" "+e.URL)
		}
		want := []string{
			OutcomeAllowed + " console:sam " + site.URL + "/",
			OutcomeRefused + " console:sam http://169.254.169.254/latest/meta-data/",
		}
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
