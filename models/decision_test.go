package models

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestDecisionsStoreAndPurge: decisions are stored through their batch
// writer with capped URLs, read back by ticket newest first, and purged by
// time without touching the refusal log.
// Both engines: on PostgreSQL the table's id once had no default, and
// every batch failed (migration 11).
func TestDecisionsStoreAndPurge(t *testing.T) { eachEngine(t, decisionsStoreAndPurge) }

func decisionsStoreAndPurge(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := NewDecisionWriter(s, RefusalWriterOptions{FlushInterval: time.Millisecond})
	long := "https://status.example.com/?" + strings.Repeat("q", 2*MaxDecisionURL)
	for i, d := range []Decision{
		{Time: old, Tool: "fetch_url", Ticket: "SUP-1", URL: "https://a.example/"},
		{Time: old.Add(time.Hour), Tool: "proxy", Ticket: "SUP-1", URL: long, Proxied: true},
		{Time: old.Add(2 * time.Hour), Tool: "fetch_url", Ticket: "SUP-2", URL: "https://b.example/"},
		{Tool: "fetch_url", Ticket: "SUP-1", URL: "https://c.example/"}, // stamped now
	} {
		if !w.Write(d) {
			t.Fatalf("write %d dropped", i)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertRefusals(ctx, []Refusal{{Time: old, Ticket: "SUP-1", Code: "forbidden"}}); err != nil {
		t.Fatal(err)
	}
	rows, more, err := s.DecisionsOfTicket(ctx, "SUP-1", 2)
	if err != nil || !more || len(rows) != 2 || rows[0].URL != "https://c.example/" || rows[0].Time.IsZero() || rows[0].Outcome != DecisionAllowed {
		t.Fatalf("newest two of SUP-1: %v more=%v %+v", err, more, rows)
	}
	if u := rows[1].URL; utf8.RuneCountInString(u) != MaxDecisionURL || !strings.HasSuffix(u, "…") || !rows[1].Proxied {
		t.Fatalf("a long URL is stored as %d characters: %q", utf8.RuneCountInString(u), u)
	}
	if _, _, err := s.DecisionsOfTicket(ctx, "SUP-1", MaxRefusalPage+1); err == nil {
		t.Fatal("an oversized page was accepted")
	}
	n, err := s.PurgeDecisionsBefore(ctx, old.Add(90*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("purge: %d %v", n, err)
	}
	rows, more, err = s.DecisionsOfTicket(ctx, "SUP-1", 10)
	if err != nil || more || len(rows) != 1 || rows[0].URL != "https://c.example/" {
		t.Fatalf("after the purge: %v %+v", err, rows)
	}
	if countRefusals(t, s) != 1 {
		t.Fatal("purging decisions touched the refusal log")
	}
}

// TestRefusalTicketAndSearch: the log filters by ticket exactly, and a
// search finds every word in any case in the URL, the redirects, the
// message or the trigger, literally (no LIKE wildcards).
func TestRefusalTicketAndSearch(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	rows := []Refusal{
		{Ticket: "SUP-1", URL: "https://CRM.intranet.corp/Orders", Message: "Not on the allowlist.", Code: "forbidden"},
		{Ticket: "SUP-1", URL: "http://10.0.0.1/", Redirects: StringList{"https://short.example/abc"}, Message: "Internal.", Code: "forbidden"},
		{Ticket: "SUP-2", URL: "https://wiki.example/a_b", Message: "Timed out.", Trigger: "Mail from Bob", Code: "timeout"},
		{URL: "https://wiki.example/axb", Message: "Timed out.", Code: "timeout"},
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	urls := func(q RefusalQuery) []string {
		t.Helper()
		got, _, err := s.ListRefusals(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range got {
			out = append(out, r.URL)
		}
		return out
	}
	for _, tt := range []struct {
		q    RefusalQuery
		want string
	}{
		{RefusalQuery{Ticket: "SUP-1"}, "http://10.0.0.1/ https://CRM.intranet.corp/Orders"},
		{RefusalQuery{Ticket: "sup-1"}, ""},
		{RefusalQuery{Search: "crm.INTRANET"}, "https://CRM.intranet.corp/Orders"},
		{RefusalQuery{Search: "short.example"}, "http://10.0.0.1/"},
		{RefusalQuery{Search: "timed bob"}, "https://wiki.example/a_b"},
		{RefusalQuery{Search: "a_b"}, "https://wiki.example/a_b"},
		{RefusalQuery{Search: "internal", Ticket: "SUP-2"}, ""},
		{RefusalQuery{Search: "  "}, "https://wiki.example/axb https://wiki.example/a_b http://10.0.0.1/ https://CRM.intranet.corp/Orders"},
	} {
		if got := strings.Join(urls(tt.q), " "); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.q, got, tt.want)
		}
	}
	if _, _, err := s.ListRefusals(ctx, RefusalQuery{Search: "a b c d e f g h i"}); err == nil || !strings.Contains(err.Error(), "at most 8") {
		t.Fatalf("nine words: %v", err)
	}
}

// TestSearchPagesReadABoundedWindow: a search page reads at most its
// window of rows; when it ends short, its cursor continues below the
// window, and the last window says the log is searched to its end.
func TestSearchPagesReadABoundedWindow(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	defer func(n int64) { searchScanRows = n }(searchScanRows)
	searchScanRows = 10
	var rows []Refusal
	for i := range 30 {
		msg := "filler"
		if i == 2 || i == 25 {
			msg = "needle"
		}
		rows = append(rows, Refusal{URL: "https://x.example/", Message: msg})
	}
	if err := s.InsertRefusals(ctx, rows); err != nil { // IDs 1 to 30
		t.Fatal(err)
	}
	var pages [][]int64
	var cursors []int64
	q := RefusalQuery{Search: "needle"}
	for {
		got, next, err := s.ListRefusals(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		pages, cursors = append(pages, ids), append(cursors, next)
		if next == 0 {
			break
		}
		q.BeforeID = next
	}
	// Windows [21,31), [11,21), [1,11): the needles are rows 26 and 3.
	if len(pages) != 3 || len(pages[0]) != 1 || pages[0][0] != 26 || len(pages[1]) != 0 || len(pages[2]) != 1 || pages[2][0] != 3 ||
		cursors[0] != 21 || cursors[1] != 11 || cursors[2] != 0 {
		t.Fatalf("pages %v, cursors %v", pages, cursors)
	}
	newer, more, err := s.ListRefusalsAfter(ctx, RefusalQuery{Search: "needle"}, 3)
	if err != nil || len(newer) != 0 || !more {
		t.Fatalf("newer than 3 within one window: %v %v %v", newer, more, err)
	}
	var all []int64
	if err := s.EachRefusal(ctx, RefusalQuery{Search: "needle"}, func(r *Refusal) error { all = append(all, r.ID); return nil }); err != nil || len(all) != 2 {
		t.Fatalf("EachRefusal walks every window: %v %v", all, err)
	}
}
