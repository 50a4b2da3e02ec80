package models

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// windowRows inserts refusals over three days around midnight, some of
// them aggregated bursts (Count > 1), and returns them as stored.
func windowRows(t *testing.T, s *Store, base time.Time) []Refusal {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	reasons := []string{"not_allowlisted", "metadata", "internal_address", "dns", ""}
	var rows []Refusal
	for i := range 900 {
		r := Refusal{
			Time:   base.Add(time.Duration(rng.Int64N(int64(72 * time.Hour)))),
			Host:   fmt.Sprintf("h%d.example", rng.IntN(9)),
			Agent:  fmt.Sprintf("bot-%d", rng.IntN(4)),
			Tool:   []string{"fetch_url", "proxy", "check"}[rng.IntN(3)],
			Reason: reasons[rng.IntN(len(reasons))],
			Kind:   []string{KindPolicy, KindPolicy, KindNetwork}[rng.IntN(3)],
		}
		if i%10 == 0 {
			r.Host = "" // no host to list
		}
		if i%7 == 0 {
			last := r.Time.Add(400 * time.Millisecond)
			r.Count, r.LastTime = int64(2+rng.IntN(500)), &last
		}
		rows = append(rows, r)
	}
	if err := s.InsertRefusals(testCtx(t), rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// rowSums is what counting the rows in [since, until) by col says.
func rowSums(rows []Refusal, col func(*Refusal) string, since, until time.Time) map[valueKind]int64 {
	out := map[valueKind]int64{}
	for i := range rows {
		r := &rows[i]
		if !r.Time.Before(since) && r.Time.Before(until) {
			out[valueKind{col(r), r.Kind}] += max(r.Count, 1)
		}
	}
	return out
}

// Every window, on a period's edge or not, within one period or across
// days, is counted exactly: the counters for whole periods and the rows
// at the ends agree with counting every row, for the hourly and the
// daily dimensions. The windows are drawn so that every branch of
// planWindow (rows inside, counter minus rows outside, at either end and
// within one period) is taken.
func TestWindowSumsAgreeWithTheRows(t *testing.T) { eachEngine(t, testWindowSumsAgreeWithTheRows) }

func testWindowSumsAgreeWithTheRows(t *testing.T) {
	s := openTestStore(t)
	base := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	rows := windowRows(t, s, base)
	rng := rand.New(rand.NewPCG(1, 2))
	edges := []time.Time{base, base.Add(24 * time.Hour), base.Add(13 * time.Hour), base.Add(37*time.Hour + 10*time.Minute),
		base.Add(37*time.Hour + 50*time.Minute), base.Add(50*time.Hour + 1), base.Add(-time.Hour), base.Add(80 * time.Hour),
		// Within one hour, and within one day, most of it: the period's
		// counter minus the rows on both sides.
		base.Add(25*time.Hour + 10*time.Minute), base.Add(25*time.Hour + 50*time.Minute), base.Add(26 * time.Hour), base.Add(46*time.Hour + 30*time.Minute)}
	for range 40 {
		edges = append(edges, base.Add(time.Duration(rng.Int64N(int64(74*time.Hour)))-time.Hour))
	}
	dims := []counterDim{hostCounter, agentCounter, reasonCounter}
	plans := map[string]bool{}
	for i, since := range edges {
		for _, until := range edges[i+1:] {
			lo, hi := since, until
			if hi.Before(lo) {
				lo, hi = hi, lo
			}
			for _, d := range dims {
				got, err := windowSums(s.r, d, lo, hi)
				if err != nil {
					t.Fatal(err)
				}
				want := rowSums(rows, d.valueOf, lo, hi)
				maps.DeleteFunc(want, func(_ valueKind, n int64) bool { return n == 0 })
				if !maps.Equal(got, want) {
					t.Fatalf("%s over [%s, %s): counters say %v, the rows %v", d.name, lo.Format(time.DateTime), hi.Format(time.DateTime), got, want)
				}
				plans[planShape(planWindow(lo, hi, d.period))] = true
				// The top three by the counters' ranking are the rows'.
				top, err := topValues(s.r, d, lo, hi, 3)
				if err != nil {
					t.Fatal(err)
				}
				byName := map[string]int64{}
				for k, n := range want {
					byName[k.Value] += n
				}
				var ranked []NameCount
				for name, n := range byName {
					ranked = append(ranked, NameCount{name, n})
				}
				if wantTop := rankNames(ranked, 3); fmt.Sprint(top) != fmt.Sprint(wantTop) {
					t.Fatalf("top %ss over [%s, %s) = %v; the rows say %v", d.name, lo.Format(time.DateTime), hi.Format(time.DateTime), top, wantTop)
				}
			}
		}
	}
	for _, want := range []string{"+rows", "counters", "counters+rows", "counters-rows", "counters+rows+rows", "counters-rows-rows", "counters+rows-rows"} {
		if !plans[want] {
			t.Errorf("no window was counted as %s; the windows drawn took %v", want, slices.Sorted(maps.Keys(plans)))
		}
	}
}

// planShape names how a window is counted ("counters-rows+rows"), to
// check that the test takes every way.
func planShape(w windowPlan) string {
	shape := ""
	if w.lo.Before(w.hi) {
		shape = "counters"
	}
	for _, p := range w.pieces {
		shape += map[bool]string{true: "+rows", false: "-rows"}[p.sign > 0]
	}
	return shape
}

// The counters equal the rows' sums, dimension by dimension, period by
// period: after inserts of single and aggregated rows, after a review
// (which counts nothing), and after a purge that cuts through an hour
// and a day.
func TestCountersEqualTheRowsAfterInsertsReviewAndPurge(t *testing.T) {
	eachEngine(t, testCountersEqualTheRowsAfterInsertsReviewAndPurge)
}

func testCountersEqualTheRowsAfterInsertsReviewAndPurge(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	base := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	windowRows(t, s, base)
	wantCountersOfTheRows(t, s, "after the inserts", false)
	var ids []int64
	if err := s.r.Table("refusals").Order("id").Limit(50).Pluck("id", &ids).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.ReviewRefusals(ctx, ids, StatusExpected, "ok", "admin"); err != nil {
		t.Fatal(err)
	}
	wantCountersOfTheRows(t, s, "after a review", false)
	if _, err := s.PurgeRefusalsBefore(ctx, base.Add(30*time.Hour+17*time.Minute)); err != nil {
		t.Fatal(err)
	}
	wantCountersOfTheRows(t, s, "after a purge through an hour and a day", true)
}

// Migration 14 fills the reason counters of a database whose refusals
// were counted before it, with the refusals aggregated rows stand for.
func TestReasonCountersAreFilledForAnOlderDatabase(t *testing.T) {
	path := t.TempDir() + "/o.db"
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	rows := windowRows(t, s, base)
	if err := s.w.Exec("DELETE FROM refusal_counts WHERE dim = ?", dimReason).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.w.Exec("DELETE FROM schema_migrations WHERE version >= 14").Error; err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	until := base.Add(72 * time.Hour)
	got, err := windowSums(s.r, reasonCounter, base, until)
	if err != nil {
		t.Fatal(err)
	}
	if want := rowSums(rows, func(r *Refusal) string { return r.Reason }, base, until); !maps.Equal(got, want) {
		t.Fatalf("reason counters after migration 14: %v; the rows say %v", got, want)
	}
}

// A window that ends now or later takes the rest of its last period from
// that period's counter, minus the (next to no) rows after its end, however
// early in the period it ends: adding the period's rows so far would read
// half a day of a flood on the Overview every morning.
func TestAWindowEndingNowSubtractsTheFutureRatherThanAddingThePast(t *testing.T) {
	today := utcDay(time.Now())
	until := today.Add(25 * time.Hour) // an hour into tomorrow: later than now, early in its day
	w := planWindow(today.Add(-24*time.Hour), until, byDay)
	for _, p := range w.pieces {
		if p.sign > 0 {
			t.Fatalf("plan %+v adds the rows of [%v, %v); want the period's counter minus the rows after %v", w, p.from, p.to, until)
		}
	}
	if !w.hi.Equal(today.Add(48 * time.Hour)) {
		t.Errorf("counters read up to %v, want the end of the last period %v", w.hi, today.Add(48*time.Hour))
	}
}

// wantCountersOfTheRows fails t unless every counter equals the rows'
// sums, dimension by dimension, period by period, and the hours' totals
// have their rows' smallest and largest ID. After a purge (purged), an
// hour's range may start lower: the purge takes rows from the counters
// without reading what is left of the hour, and a wider range is still
// a bound of its rows.
func wantCountersOfTheRows(t *testing.T, s *Store, when string, purged bool) {
	t.Helper()
	type counter struct {
		Period           time.Time
		Dim, Value, Kind string
		N, MinID, MaxID  int64
	}
	var stored []counter
	if err := s.r.Raw("SELECT period, dim, value, kind, n, min_id, max_id FROM refusal_counts").Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	var rows []Refusal
	if err := s.r.Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	// Each counter: its refusals, and for the hours' totals and the days'
	// hosts the IDs of their rows.
	want := map[string]count{}
	for k, c := range countRows(rows) {
		if !rangedDim(k.dim) {
			c.minID, c.maxID = 0, 0
		}
		want[fmt.Sprintf("%s %s %q %s", k.period.UTC().Format(time.DateTime), k.dim, k.value, k.kind)] = c
	}
	got := map[string]count{}
	for _, c := range stored {
		if c.N != 0 {
			got[fmt.Sprintf("%s %s %q %s", c.Period.UTC().Format(time.DateTime), c.Dim, c.Value, c.Kind)] = count{c.N, c.MinID, c.MaxID}
		}
	}
	for k, c := range got {
		// A purge leaves a range wider than its rows, never narrower.
		if w, ok := want[k]; ok && purged && c.minID > 0 && c.minID <= w.minID {
			c.minID = w.minID
			got[k] = c
		}
		if w, ok := want[k]; ok && purged && c.maxID >= w.maxID {
			c.maxID = w.maxID
			got[k] = c
		}
	}
	if !maps.Equal(got, want) {
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%s: counter %s = %+v, the rows say %+v", when, k, got[k], n)
			}
		}
		for k, n := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: counter %s = %+v, no row is counted there", when, k, n)
			}
		}
		t.FailNow()
	}
	if len(want) == 0 {
		t.Fatalf("%s: no rows to count", when)
	}
	var reasons int
	for k := range want {
		if strings.Contains(k, " reason ") {
			reasons++
		}
	}
	if reasons == 0 {
		t.Fatalf("%s: no reason counters", when)
	}
}

// Review finding: the Overview asks for the window until its "now" plus a
// nanosecond, and plans it a moment later, so the window's end was
// always just before the clock: in the morning its last day was counted
// by adding the day's rows so far (half a day of a flood) instead of
// taking the day's counter minus the rows after now.
func TestAWindowEndingAtTheRequestsNowTakesTheCounter(t *testing.T) {
	morning := time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC)
	wallClock = func() time.Time { return morning.Add(3 * time.Millisecond) } // the plan is made just after the request began
	t.Cleanup(func() { wallClock = time.Now })
	w := planWindow(utcDay(morning).AddDate(0, 0, -1), morning.Add(time.Nanosecond), byDay)
	for _, p := range w.pieces {
		if p.sign > 0 {
			t.Fatalf("plan %+v adds the rows of [%v, %v); want the day's counter minus the rows after now", w, p.from, p.to)
		}
	}
	// A window that ended well before now is still counted from the
	// rows where they are fewer.
	w = planWindow(utcDay(morning).AddDate(0, 0, -2), morning.AddDate(0, 0, -1), byDay)
	if len(w.pieces) != 1 || w.pieces[0].sign < 0 {
		t.Fatalf("a window ending yesterday morning: plan %+v; want yesterday's rows until then added", w)
	}
}
