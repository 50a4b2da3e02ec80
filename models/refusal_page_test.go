package models

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// Walking every page must visit each matching row exactly once, newest
// first, whatever the page size and filter.
func TestKeysetPaginationCoversEverything(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		const total = 3001
		rows := make([]Refusal, total)
		for i := range rows {
			rows[i] = Refusal{Host: fmt.Sprintf("h%d.example", i%7), Code: []string{"a", "b", "c"}[i%3], Time: t0.Add(time.Duration(i) * time.Second)}
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name  string
			q     RefusalQuery
			match func(i int) bool
		}{
			{"all, default page", RefusalQuery{}, func(int) bool { return true }},
			{"all, page 500", RefusalQuery{Limit: 500}, func(int) bool { return true }},
			{"all, page 7", RefusalQuery{Limit: 7}, func(int) bool { return true }},
			{"code b, page 50", RefusalQuery{Code: "b"}, func(i int) bool { return i%3 == 1 }},
			{"host h3 exact, page 13", RefusalQuery{Host: "h3.example", HostExact: true, Limit: 13}, func(i int) bool { return i%7 == 3 }},
			{"exactly one page", RefusalQuery{Limit: 500, Host: "h1.", Code: "a", Until: t0.Add(2100 * time.Second)}, func(i int) bool { return i%7 == 1 && i%3 == 0 && i < 2100 }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				want := 0
				for i := range total {
					if tt.match(i) {
						want++
					}
				}
				seen := make(map[int64]bool)
				q := tt.q
				var prev int64 = 1 << 62
				pages := 0
				for {
					page, next, err := s.ListRefusals(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					pages++
					limit := max(q.Limit, DefaultRefusalPage*boolInt(q.Limit == 0))
					if len(page) > limit {
						t.Fatalf("page of %d rows exceeds limit %d", len(page), limit)
					}
					for _, r := range page {
						if seen[r.ID] {
							t.Fatalf("row %d appears on two pages", r.ID)
						}
						if r.ID >= prev {
							t.Fatalf("row %d after %d: not newest first", r.ID, prev)
						}
						seen[r.ID], prev = true, r.ID
						if !tt.match(int(r.ID - 1)) {
							t.Fatalf("row %d does not match the filter", r.ID)
						}
					}
					if next == 0 {
						break
					}
					if len(page) != limit || next != page[len(page)-1].ID {
						t.Fatalf("next = %d after a page of %d; want the last ID of a full page", next, len(page))
					}
					q.BeforeID = next
				}
				if len(seen) != want {
					t.Errorf("pages covered %d rows, want %d", len(seen), want)
				}
				if wantPages := max(1, (want+limitOf(tt.q)-1)/limitOf(tt.q)); pages != wantPages {
					t.Errorf("took %d pages, want %d (no trailing empty page)", pages, wantPages)
				}
			})
		}
	})
}

func limitOf(q RefusalQuery) int {
	if q.Limit == 0 {
		return DefaultRefusalPage
	}
	return q.Limit
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The ID step of a page must walk an index (or the rowid) in ID order and
// stop at the limit, or, where it cannot, read nothing but a compact index.
// A "USE TEMP B-TREE FOR ORDER BY" over full rows would mean sorting every
// matching row first: fine on a test database, seconds on a million rows.
func TestRefusalPagePlans(t *testing.T) {
	s := openTestStore(t)
	tests := []struct {
		name      string
		q         RefusalQuery
		index     string // forced index, as pageIDs does for rare host substrings
		wantIndex string
		mayTopN   bool // a top-N sort over index entries only is fine
	}{
		{"newest page", RefusalQuery{}, "", "", false},
		{"next page", RefusalQuery{BeforeID: 900}, "", "", false},
		{"code", RefusalQuery{Code: "x", BeforeID: 900}, "", "COVERING INDEX idx_refusals_code", false},
		{"tool", RefusalQuery{Tool: "x"}, "", "COVERING INDEX idx_refusals_tool", false},
		{"agent", RefusalQuery{Agent: "x"}, "", "COVERING INDEX idx_refusals_agent", false},
		{"reason", RefusalQuery{Reason: "x"}, "", "COVERING INDEX idx_refusals_reason", false},
		{"status", RefusalQuery{Status: StatusExpected}, "", "COVERING INDEX idx_refusals_status", false},
		{"unreviewed", RefusalQuery{Unreviewed: true}, "", "COVERING INDEX idx_refusals_status", false},
		{"host exact", RefusalQuery{Host: "x", HostExact: true, BeforeID: 900}, "", "COVERING INDEX idx_refusals_host", false},
		{"host substring, recent rows", RefusalQuery{Host: "x", BeforeID: 900}, "", "INTEGER PRIMARY KEY", false},
		{"host substring, older rows", RefusalQuery{Host: "x", BeforeID: 900}, "idx_refusals_host", "COVERING INDEX idx_refusals_host", true},
		{"time window", RefusalQuery{Since: t0, Until: t0.Add(time.Hour)}, "", "COVERING INDEX idx_refusals_time", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := explainIDStep(t, s, tt.q, tt.index)
			if !tt.mayTopN && strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("plan sorts in a temp b-tree:\n%s", plan)
			}
			if !strings.Contains(plan, tt.wantIndex) {
				t.Errorf("plan does not use %s:\n%s", tt.wantIndex, plan)
			}
		})
	}
}

func explainIDStep(t *testing.T, s *Store, q RefusalQuery, index string) string {
	t.Helper()
	sql := s.r.ToSQL(func(tx *gorm.DB) *gorm.DB {
		db, err := q.idQuery(tx, 51, index)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		return db.Pluck("id", &ids)
	})
	var steps []struct{ Detail string }
	if err := s.r.Raw("EXPLAIN QUERY PLAN " + sql).Scan(&steps).Error; err != nil {
		t.Fatalf("EXPLAIN %s: %v", sql, err)
	}
	var details []string
	for _, st := range steps {
		details = append(details, st.Detail)
	}
	if len(details) == 0 {
		t.Fatalf("EXPLAIN %s returned no plan", sql)
	}
	return sql + "\n" + strings.Join(details, "\n")
}

// A rare host substring is answered partly from the newest recentScan rows
// and partly from the host index; the two halves must join without gaps,
// repeats or order breaks.
func TestHostSubstringAcrossRecentScanBoundary(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		total := recentScan + 5000
		rows := make([]Refusal, total)
		var want []int64
		for i := range rows {
			rows[i] = Refusal{Host: "common.example", Time: t0}
			if i%997 == 0 {
				rows[i].Host = "rare.example"
				want = append(want, int64(i+1))
			}
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(want)
		for _, limit := range []int{4, 500} {
			t.Run(fmt.Sprint("page ", limit), func(t *testing.T) {
				var got []int64
				err := s.EachRefusal(ctx, RefusalQuery{Host: "RARE"}, func(r *Refusal) error {
					got = append(got, r.ID)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				q := RefusalQuery{Host: "rare", Limit: limit}
				paged := pagedIDs(t, s, q)
				if !slices.Equal(got, want) || !slices.Equal(paged, want) {
					t.Errorf("rare host rows:\n export %v\n  paged %v\n   want %v", got, paged, want)
				}
			})
		}
	})
}
