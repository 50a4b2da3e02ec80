package models

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Paging newer from any cursor must return exactly the rows an older walk
// showed above it, newest first, and say whether more lie above.
func TestListRefusalsAfter(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		const total = 120
		rows := make([]Refusal, total)
		for i := range rows {
			rows[i] = Refusal{Host: fmt.Sprintf("h%d.example", i%4), Code: "forbidden", Time: t0.Add(time.Duration(i) * time.Minute)}
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name      string
			q         RefusalQuery
			after     int64
			wantIDs   []int64
			wantNewer bool
		}{
			{"just below the top", RefusalQuery{Limit: 5}, 115, []int64{120, 119, 118, 117, 116}, false},
			{"more above", RefusalQuery{Limit: 5}, 100, []int64{105, 104, 103, 102, 101}, true},
			{"filtered", RefusalQuery{Limit: 3, Host: "h1.example", HostExact: true}, 10, []int64{22, 18, 14}, true},
			{"filtered at the top", RefusalQuery{Limit: 3, Host: "h1.example", HostExact: true}, 110, []int64{118, 114}, false},
			{"nothing newer", RefusalQuery{}, 120, nil, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, newer, err := s.ListRefusalsAfter(ctx, tt.q, tt.after)
				if err != nil {
					t.Fatal(err)
				}
				ids := make([]int64, len(got))
				for i, r := range got {
					ids[i] = r.ID
				}
				if !slices.Equal(ids, tt.wantIDs) || newer != tt.wantNewer {
					t.Errorf("after %d: got %v newer=%v, want %v newer=%v", tt.after, ids, newer, tt.wantIDs, tt.wantNewer)
				}
			})
		}
	})
}

func TestListRefusalsAfterRejectsBadCursors(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		tests := []struct {
			name  string
			q     RefusalQuery
			after int64
			want  string
		}{
			{"negative", RefusalQuery{}, -1, "negative"},
			{"both directions", RefusalQuery{BeforeID: 9}, 3, "use one"},
			{"page too big", RefusalQuery{Limit: MaxRefusalPage + 1}, 3, "out of range"},
			{"bad status", RefusalQuery{Status: "maybe"}, 3, "maybe"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := s.ListRefusalsAfter(ctx, tt.q, tt.after)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want it to mention %q", err, tt.want)
				}
			})
		}
	})
}

func TestRefusalValues(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		empty, err := s.RefusalValues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(empty.Tools)+len(empty.Agents)+len(empty.Codes)+len(empty.Reasons) != 0 {
			t.Errorf("empty log has values: %+v", empty)
		}
		rows := []Refusal{
			{Tool: "fetch_url", Agent: "helpdesk", Code: "forbidden", Reason: "not_allowlisted"},
			{Tool: "take_screenshot", Agent: "", Code: "forbidden", Reason: "internal_address"},
			{Tool: "fetch_url", Agent: "triage", Code: "invalid", Reason: "scheme"},
			{Tool: "fetch_url", Agent: "helpdesk", Code: "timeout", Reason: "timeout"},
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		got, err := s.RefusalValues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := RefusalFacets{
			Tools:   []string{"fetch_url", "take_screenshot"},
			Agents:  []string{"helpdesk", "triage"},
			Codes:   []string{"forbidden", "invalid", "timeout"},
			Reasons: []string{"internal_address", "not_allowlisted", "scheme", "timeout"},
		}
		for _, c := range []struct {
			name      string
			got, want []string
		}{{"tools", got.Tools, want.Tools}, {"agents", got.Agents, want.Agents}, {"codes", got.Codes, want.Codes}, {"reasons", got.Reasons, want.Reasons}} {
			if !slices.Equal(c.got, c.want) {
				t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
			}
		}
	})
}

func TestRefusalValuesCapsEachList(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rows := make([]Refusal, MaxFacetValues+5)
		for i := range rows {
			rows[i] = Refusal{Agent: fmt.Sprintf("agent-%04d", i)}
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		got, err := s.RefusalValues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Agents) != MaxFacetValues || got.Agents[0] != "agent-0000" {
			t.Errorf("got %d agents starting %q, want %d starting agent-0000", len(got.Agents), got.Agents[0], MaxFacetValues)
		}
	})
}

func TestDistinctValuesRejectsUnknownColumns(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		if _, err := s.distinctValues(testCtx(t), "url; DROP TABLE refusals"); err == nil || !strings.Contains(err.Error(), "not a refusal column") {
			t.Errorf("err = %v, want a refusal of the column", err)
		}
	})
}

// TopRefusedHosts counts only the window's rows, through the time index.
func TestTopRefusedHostsThroughTheTimeIndex(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		var rows []Refusal
		for i, h := range []string{"a", "b", "a", "c", "b", "a", "old", "old", "old", "old", "", "", "", ""} {
			at := t0.Add(time.Duration(i) * time.Minute)
			if h == "old" {
				at = t0.Add(-48 * time.Hour)
			}
			host := h + ".example"
			if h == "" {
				host = "" // a malformed URL's refusal: no host to list
			}
			rows = append(rows, Refusal{Host: host, Time: at})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		got, err := s.TopRefusedHosts(ctx, t0, 3)
		want := []HostCount{{"a.example", 3}, {"b.example", 2}, {"c.example", 1}}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("TopRefusedHosts = %v, %v; want %v", got, err, want)
		}
		if testOnPostgres(t) {
			return // PostgreSQL plans this itself; there is no index to force
		}
		var plan []struct {
			ID, Parent, NotUsed int
			Detail              string
		}
		if err := s.r.Raw("EXPLAIN QUERY PLAN SELECT host, COUNT(*) FROM refusals INDEXED BY idx_refusals_time WHERE time >= ? GROUP BY host", t0).Scan(&plan).Error; err != nil {
			t.Fatalf("the time index is gone, so TopRefusedHosts cannot force it: %v", err)
		}
	})
}

// A host substring that matches few hosts, past the newest rows, is found
// through the refused-host list, including on a database that had
// refusals before the list existed.
func TestRareHostSubstringUsesTheHostList(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rows := make([]Refusal, 0, recentScan+2000)
		for i := 0; i < cap(rows); i++ {
			h := fmt.Sprintf("svc-%d.example", i%50)
			if i == 10 || i == 20 {
				h = "rare-needle.example"
			}
			rows = append(rows, Refusal{Host: h, Time: t0.Add(time.Duration(i) * time.Second)})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		check := func(s *Store) {
			t.Helper()
			got, _, err := s.ListRefusals(ctx, RefusalQuery{Host: "needle"})
			if err != nil || len(got) != 2 || got[0].Host != "rare-needle.example" || got[0].ID <= got[1].ID {
				t.Fatalf("rare substring: %d rows, %v", len(got), err)
			}
			none, _, err := s.ListRefusals(ctx, RefusalQuery{Host: "nowhere"})
			if err != nil || len(none) != 0 {
				t.Fatalf("no match: %d rows, %v", len(none), err)
			}
		}
		check(s)
		// An older database: the list is empty until the store is opened again.
		if err := s.w.Exec("DELETE FROM refusal_hosts").Error; err != nil {
			t.Fatal(err)
		}
		forgetMigrations(t, s)
		path := s.Path()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		check(again)
	})
}
