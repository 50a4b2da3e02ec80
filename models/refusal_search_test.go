package models

import (
	"slices"
	"testing"
	"time"
)

// A search limited to an old day starts its windows at the top of the
// day's ID range, not at the newest row, and ends at the range's bottom:
// the first page already holds the day's match, and paging stops there
// instead of walking empty windows down to the log's first row.
func TestSearchOfAnOldDayStartsAndEndsAtItsIDRange(t *testing.T) {
	eachEngine(t, testSearchOfAnOldDayStartsAndEndsAtItsIDRange)
}

func testSearchOfAnOldDayStartsAndEndsAtItsIDRange(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	defer func(n int64) { searchScanRows = n }(searchScanRows)
	searchScanRows = 10
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var rows []Refusal
	// IDs 1-30 on the first day, 31-60 on the second (the old day
	// searched), 61-160 on later days: ten windows of newer rows.
	for i := range 160 {
		day := 2 + (i-60)/25
		switch {
		case i < 30:
			day = 0
		case i < 60:
			day = 1
		}
		msg := "filler"
		if i == 5 || i == 44 || i == 140 {
			msg = "needle"
		}
		rows = append(rows, Refusal{Time: base.Add(time.Duration(day)*24*time.Hour + time.Duration(i)*time.Minute), URL: "https://x.example/", Message: msg})
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	q := RefusalQuery{Search: "needle", Since: base.Add(24 * time.Hour), Until: base.Add(48 * time.Hour)}
	got, next, err := s.ListRefusals(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// The day's rows are IDs 31-60: windows [51,61) and [41,51) hold
	// them, so the match (row 45) is on the second page at the latest,
	// and no page goes below ID 31 for more.
	var pages [][]int64
	var cursors []int64
	for {
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		pages, cursors = append(pages, ids), append(cursors, next)
		if next == 0 || len(pages) > 20 {
			break
		}
		q.BeforeID = next
		if got, next, err = s.ListRefusals(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if len(pages) != 3 || !slices.Equal(slices.Concat(pages...), []int64{45}) || len(pages[1]) != 1 || cursors[0] != 51 || cursors[1] != 41 || cursors[2] != 0 {
		t.Fatalf("pages %v, cursors %v; want windows [51,61), [41,51), [31,41) with row 45 in the second, then the end", pages, cursors)
	}
}
