package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Counting a window of time from the counters (refusal_counts.go), for
// the Overview: at ten million rows, with 2.6 million refusals on one day,
// counting the rows of a day took seconds (over 20 s for the page), while
// a day's counters are a few thousand rows at most.
//
// A window [since, until) rarely starts and ends on a counter's period
// (an hour, or a day for hosts). The periods wholly inside it are read
// from the counters; each end that cuts through a period is counted from
// the rows, either the part inside the window (added) or, when that is
// the longer part, the period's counter minus the part outside it
// (subtracted). So the rows read are at most half a period at each end,
// and for the Overview's windows, which start on a period and end now,
// only the rows written after "now" (none, but for a clock ahead of this
// one): the answer is exactly what counting the rows would say.

// granularity is a counter's period: hours, or days.
type granularity struct {
	day         bool
	floor, next func(time.Time) time.Time
}

var (
	byHour = granularity{false, hourOf, nextHour}
	byDay  = granularity{true, utcDay, nextDay}
)

// wallClock is the time now (a variable for tests).
var wallClock = time.Now

// endsNowSlack is how long before the clock a window may end and still
// count as ending now (see planWindow): longer than a request takes.
const endsNowSlack = time.Minute

// rowPiece is a stretch of time counted from the rows, added to the
// counters' sums (sign 1) or taken from them (sign -1).
type rowPiece struct {
	from, to time.Time
	sign     int64
}

// windowPlan is how a window is counted: the counters of the periods in
// [lo, hi) (none when lo is not before hi), plus or minus the pieces.
type windowPlan struct {
	lo, hi time.Time
	pieces []rowPiece
}

// planWindow splits [since, until) for counters of granularity g.
func planWindow(since, until time.Time, g granularity) windowPlan {
	since, until = since.UTC(), until.UTC()
	if !until.After(since) {
		return windowPlan{}
	}
	p, pl := g.floor(since), g.floor(until)
	if p.Equal(pl) && !p.Equal(since) {
		// Within one period: its rows, or its counter minus the rows
		// around the window, whichever reads less.
		q := g.next(p)
		if until.Sub(since) <= since.Sub(p)+q.Sub(until) {
			return windowPlan{pieces: []rowPiece{{since, until, 1}}}
		}
		return windowPlan{lo: p, hi: q, pieces: []rowPiece{{p, since, -1}, {until, q, -1}}}
	}
	var w windowPlan
	w.lo = since
	if !p.Equal(since) {
		q := g.next(p)
		if q.Sub(since) <= since.Sub(p) {
			w.lo = q
			w.pieces = append(w.pieces, rowPiece{since, q, 1})
		} else {
			w.lo = p
			w.pieces = append(w.pieces, rowPiece{p, since, -1})
		}
	}
	w.hi = until
	if !pl.Equal(until) {
		q := g.next(pl)
		// A window that ends now (the Overview's) takes the rest of its
		// last period from that period's counter: rows after now are
		// next to none, where the rows since the period began are up to
		// half a day of a flood's. "Now" is the caller's, taken when its
		// request began, so an end up to endsNowSlack before the clock
		// still ends now.
		if until.Sub(pl) <= q.Sub(until) && until.Before(wallClock().Add(-endsNowSlack)) {
			w.hi = pl
			w.pieces = append(w.pieces, rowPiece{pl, until, 1})
		} else {
			w.hi = q
			w.pieces = append(w.pieces, rowPiece{until, q, -1})
		}
	}
	return w
}

// valueKind is one counter's value and kind.
type valueKind struct{ Value, Kind string }

// windowSums counts the refusals in [since, until) by value and kind of
// one dimension d, from its counters and the rows. Entries that come to
// zero are left out.
func windowSums(db *gorm.DB, d counterDim, since, until time.Time) (map[valueKind]int64, error) {
	w := planWindow(since, until, d.period)
	out := map[valueKind]int64{}
	type group struct {
		Value, Kind string
		N           int64
	}
	add := func(groups []group, sign int64) {
		for _, gr := range groups {
			out[valueKind{gr.Value, gr.Kind}] += sign * gr.N
		}
	}
	if w.lo.Before(w.hi) {
		var groups []group
		if err := db.Raw("SELECT value, kind, SUM(n) AS n FROM refusal_counts WHERE "+dimIs(d.name)+" AND period >= ? AND period < ? GROUP BY value, kind",
			w.lo, w.hi).Scan(&groups).Error; err != nil {
			return nil, fmt.Errorf("models: reading the %s counters: %w", d.name, err)
		}
		add(groups, 1)
	}
	for _, p := range w.pieces {
		// Grouped by expressions, not the bare columns: given GROUP BY
		// host, SQLite walks the whole host index instead of the piece's
		// range of the time index.
		var groups []group
		if err := db.Raw("SELECT "+d.valueSQL()+" || '' AS value, kind || '' AS kind, SUM(repeat_count) AS n FROM refusals WHERE time >= ? AND time < ? GROUP BY 1, 2",
			p.from, p.to).Scan(&groups).Error; err != nil {
			return nil, fmt.Errorf("models: counting refusals by %s: %w", d.name, err)
		}
		add(groups, p.sign)
	}
	for k, n := range out {
		if n == 0 {
			delete(out, k)
		}
	}
	return out, nil
}

// topValues returns the k values of one dimension with the most refusals
// in [since, until), most first (ties by value, bytewise), summed over
// kinds, leaving out the blank value. The counters are ranked by the
// database, which returns only the head of the list: a day of a flood has
// 20,000 hosts, and reading them all out to rank them here cost more than
// the page's whole budget. That head is exact when the rows only take
// from the counters (the windows the pages ask for, which start on a
// period): a value outside the counters' first k+1+|taken| cannot be in
// the top k, since at least k values above it keep their counts. A
// window whose rows add to the counters is ranked here, from windowSums.
func topValues(db *gorm.DB, d counterDim, since, until time.Time, k int) ([]NameCount, error) {
	w := planWindow(since, until, d.period)
	taken := map[string]int64{}
	for _, p := range w.pieces {
		if p.sign > 0 {
			return topOfSums(db, d, since, until, k)
		}
		var groups []NameCount
		if err := db.Raw("SELECT "+d.valueSQL()+" || '' AS name, SUM(repeat_count) AS count FROM refusals WHERE time >= ? AND time < ? GROUP BY 1",
			p.from, p.to).Scan(&groups).Error; err != nil {
			return nil, fmt.Errorf("models: counting refusals by %s: %w", d.name, err)
		}
		for _, gr := range groups {
			taken[gr.Name] += gr.Count
		}
	}
	var rows []NameCount
	if w.lo.Before(w.hi) {
		if err := db.Raw("SELECT value AS name, SUM(n) AS count FROM refusal_counts WHERE "+dimIs(d.name)+" AND period >= ? AND period < ? GROUP BY value ORDER BY count DESC, "+bytewise(db, "value")+" LIMIT ?",
			w.lo, w.hi, k+1+len(taken)).Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("models: reading the %s counters: %w", d.name, err)
		}
	}
	for i := range rows {
		rows[i].Count -= taken[rows[i].Name]
	}
	return rankNames(rows, k), nil
}

// topOfSums is topValues for any window: every value's sum, ranked here.
func topOfSums(db *gorm.DB, d counterDim, since, until time.Time, k int) ([]NameCount, error) {
	sums, err := windowSums(db, d, since, until)
	if err != nil {
		return nil, err
	}
	byName := map[string]int64{}
	for vk, n := range sums {
		byName[vk.Value] += n
	}
	rows := make([]NameCount, 0, len(byName))
	for name, n := range byName {
		rows = append(rows, NameCount{Name: name, Count: n})
	}
	return rankNames(rows, k), nil
}

// rankNames orders rows by count, most first, then name (bytewise), and
// keeps the first k that have a name and a count.
func rankNames(rows []NameCount, k int) []NameCount {
	rows = slices.DeleteFunc(rows, func(r NameCount) bool { return r.Name == "" || r.Count <= 0 })
	slices.SortFunc(rows, func(a, b NameCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
	return rows[:min(k, len(rows))]
}

// bytewise is col ordered byte by byte, as Go compares strings: SQLite's
// default (BINARY) already is; PostgreSQL's follows the database's
// collation unless told "C".
func bytewise(db *gorm.DB, col string) string {
	if isPostgres(db) {
		return col + ` COLLATE "C"`
	}
	return col
}

// dimIs is the condition "dim = 'name'" with the dimension written out,
// not bound (the names are the constants above, never input): PostgreSQL
// then matches the hourly counters' partial index to it however a DSN
// sets the plan cache.
func dimIs(dim string) string {
	return "dim = '" + dim + "'"
}
