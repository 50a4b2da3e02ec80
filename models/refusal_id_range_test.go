package models

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A time filter is answered exactly, also where IDs do not follow time:
// a batch written late (after a stall) holds old times under new IDs,
// and a clock ahead puts a new time under an old ID. On PostgreSQL the
// filter runs as an ID range taken from the counters; every page must
// still be what filtering the rows by time says.
func TestTimeFiltersAreExactWhereIDsDoNotFollowTime(t *testing.T) {
	eachEngine(t, testTimeFiltersAreExactWhereIDsDoNotFollowTime)
}

func testTimeFiltersAreExactWhereIDsDoNotFollowTime(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	base := time.Date(2026, 3, 9, 10, 0, 0, 0, time.UTC)
	var rows []Refusal
	for i := range 300 {
		rows = append(rows, Refusal{Time: base.Add(time.Duration(i) * time.Minute), Host: "a.example", Code: []string{"c1", "c2", "c3"}[i%3]})
	}
	// A clock ahead: written first, timed in the last hour.
	rows[5].Time = base.Add(4*time.Hour + 30*time.Minute)
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	// A late batch: written last, timed in the second hour.
	late := []Refusal{{Time: base.Add(70 * time.Minute), Host: "late.example", Code: "c2"}, {Time: base.Add(75 * time.Minute), Host: "late.example", Code: "rare"}}
	if err := s.InsertRefusals(ctx, late); err != nil {
		t.Fatal(err)
	}
	var all []Refusal
	if err := s.r.Order("id DESC").Find(&all).Error; err != nil {
		t.Fatal(err)
	}
	windows := []struct{ since, until time.Time }{
		{base.Add(65 * time.Minute), base.Add(80 * time.Minute)},
		{base.Add(time.Hour), base.Add(2 * time.Hour)},
		{base.Add(4*time.Hour + 20*time.Minute), time.Time{}},
		{time.Time{}, base.Add(71 * time.Minute)},
		{base.Add(72 * time.Minute), base.Add(74 * time.Minute)}, // no row
		{base.Add(9 * time.Hour), time.Time{}},                   // after every row
	}
	for _, w := range windows {
		for _, code := range []string{"", "c2", "rare"} {
			var want []int64
			for _, r := range all {
				if (w.since.IsZero() || !r.Time.Before(w.since)) && (w.until.IsZero() || r.Time.Before(w.until)) && (code == "" || r.Code == code) {
					want = append(want, r.ID)
				}
			}
			var got []int64
			q := RefusalQuery{Since: w.since, Until: w.until, Code: code, Limit: 7}
			if err := s.EachRefusal(ctx, q, func(r *Refusal) error { got = append(got, r.ID); return nil }); err != nil {
				t.Fatal(err)
			}
			// Pages of 7, followed by their cursors.
			paged := pagedIDs(t, s, q)
			name := fmt.Sprintf("since %s until %s code %q", w.since.Format(time.TimeOnly), w.until.Format(time.TimeOnly), code)
			if !slices.Equal(got, want) || !slices.Equal(paged, want) {
				t.Errorf("%s: listed %v, paged %v; the rows say %v", name, got, paged, want)
			}
		}
	}
	if !isPostgres(s.r) {
		return
	}
	// The range is what answers on PostgreSQL: the late rows' hour spans
	// their IDs, the hour after it does not.
	q, none, err := RefusalQuery{Since: base.Add(time.Hour), Until: base.Add(2 * time.Hour)}.boundIDs(s.r)
	if err != nil || none || q.idLow == 0 || q.idHigh != all[0].ID {
		t.Fatalf("bound of the second hour = %d-%d, none %v, %v; want up to the late batch's last ID %d", q.idLow, q.idHigh, none, err, all[0].ID)
	}
	var low, high int64
	for _, r := range all {
		if !r.Time.Before(base.Add(3*time.Hour)) && r.Time.Before(base.Add(4*time.Hour)) {
			low, high = r.ID, max(high, r.ID)
		}
	}
	if q, _, _ = (RefusalQuery{Since: base.Add(3 * time.Hour), Until: base.Add(4 * time.Hour)}).boundIDs(s.r); q.idLow != low || q.idHigh != high {
		t.Fatalf("bound of the fourth hour = %d-%d; its rows' IDs are %d-%d", q.idLow, q.idHigh, low, high)
	}
	if _, none, _ := (RefusalQuery{Since: base.Add(9 * time.Hour)}).boundIDs(s.r); !none {
		t.Fatal("no hour after the rows is counted, yet the range says there may be rows")
	}
}
