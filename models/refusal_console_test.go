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
}

func TestListRefusalsAfterRejectsBadCursors(t *testing.T) {
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
}

func TestRefusalValues(t *testing.T) {
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
		{Tool: "screenshot", Agent: "", Code: "forbidden", Reason: "internal_address"},
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
		Tools:   []string{"fetch_url", "screenshot"},
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
}

func TestRefusalValuesCapsEachList(t *testing.T) {
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
}

func TestDistinctValuesRejectsUnknownColumns(t *testing.T) {
	s := openTestStore(t)
	if _, err := s.distinctValues(testCtx(t), "url; DROP TABLE refusals"); err == nil || !strings.Contains(err.Error(), "not a refusal column") {
		t.Errorf("err = %v, want a refusal of the column", err)
	}
}

// RefusedHostsSince must agree with TopRefusedHosts; only the plan differs.
func TestRefusedHostsSince(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	var rows []Refusal
	for i, h := range []string{"a", "b", "a", "c", "b", "a", "old", "old", "old", "old"} {
		at := t0.Add(time.Duration(i) * time.Minute)
		if h == "old" {
			at = t0.Add(-48 * time.Hour)
		}
		rows = append(rows, Refusal{Host: h + ".example", Time: at})
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprint("top ", n), func(t *testing.T) {
			got, err := s.RefusedHostsSince(ctx, t0, n)
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.TopRefusedHosts(ctx, t0, n)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || len(got) != min(n, 3) || got[0] != (HostCount{"a.example", 3}) {
				t.Errorf("RefusedHostsSince = %v, TopRefusedHosts = %v", got, want)
			}
		})
	}
	if _, err := s.RefusedHostsSince(ctx, t0, 0); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("n = 0: err = %v", err)
	}
}
