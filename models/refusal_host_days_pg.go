package models

import (
	"database/sql"
	"slices"
	"time"

	"gorm.io/gorm"
)

// A broad host substring's page from the days' host counters, on
// PostgreSQL. Probing every matching host (refusal_host_probe_pg.go)
// costs about 17 µs a host: "example.com", 5,000 service hosts under a
// flood's 2.6 million rows of others, took 105-113 ms at the median for
// its first page, every time, to return 50 rows of 50 hosts.
//
// The counters already name each day's hosts, and since migration 21
// each host's row of a day also bounds the IDs of that host's rows of
// that day (min_id, max_id, widened in the insert's transaction like the
// hours' totals). So the page is found from the few hosts that can hold
// it, in three steps, in one snapshot:
//
//  1. The edge. Walking the days that hold IDs of the page's range, newest
//     first (oldest first for a Newer page), skipping days where no host
//     matches, take each matching host's largest ID of a day as a likely
//     row, until n of them are known; the edge E is the nth largest. The
//     next day naming a matching host is found on the host counters'
//     primary key among the four days nearest, else through their
//     trigram index (migration 21): the flood's 20,000 hosts, 45 days of
//     5,000 hosts above a Newer page's cursor, took 50 ms to reach that
//     way and 5 ms this.
//  2. The hosts. A row of the page lies in [E, the cursor): if n rows
//     match there, no row below E is among the newest n. A host holds a
//     row there only if one of its days' ranges reaches into it, so the
//     page's hosts are those, read from the days whose hours' ranges do
//     (at most n plus the hosts whose range straddles the cursor), and
//     those days are read first if step 1 has not (rows written late).
//  3. The page: those hosts' newest rows in [E, cursor), through the
//     (host, id) index (perHostIDs).
//
// A day the retention purge has left keeps its hours' totals while a
// row written late survives there, but not its host counters; the purge
// marks those hours' ranges unknown (forgetDayRanges), and such a day's
// few matching rows are read one by one, each an exact range of its host.
//
// The ranges bound the rows, so step 2 misses no host; a range may be
// wider than its rows (the retention purge leaves it so, and a largest
// ID may be a row since deleted), so step 1's E is only a guess, checked
// by step 3: the answer is used when it holds n rows, which proves that n
// matching rows lie in [E, cursor). Otherwise, or where a range is
// unknown (0, counters from before migration 21), where no day near the
// cursor names a matching host and probing is cheaper (up to 5,000
// hosts: manyHostIDs), or where too many hosts straddle the cursor, the
// page is read as before.
//
// At ten million rows: "example.com"'s first page 24-26 ms at the median
// (105-113 probing), the flood's hosts from far below 43-46 ms (1,555
// reading the log).

// hostDaySpan is how many days that hold rows of the page's range the
// edge is looked for in, and hostDayReads how many days' host counters a
// page reads at most: a day's matching hosts cost milliseconds to read
// (18 ms for 10,000 at ten million rows), and a substring whose rows are
// sparser is cheaper to probe host by host.
const (
	hostDaySpan  = 4
	hostDayReads = 3
)

// hostDayMaxHosts bounds the hosts step 3 reads: a cursor inside a busy
// day has every host of that day straddling it.
const hostDayMaxHosts = 1000

// dayIDs is one day's rows as the hours' totals bound and count them.
type dayIDs struct {
	Day       time.Time
	Low, High int64
	Unknown   bool
	Rows      int64
}

// hostDayMaxRowsRead bounds the rows of a day of unknown range that a
// page reads one by one: the purge leaves a few written late; more, and
// the page is read another way.
const hostDayMaxRowsRead = 10000

// hostDayRow is a matching host's counter of one day.
type hostDayRow struct {
	Value        string
	MinID, MaxID int64
}

// hostDayIDs finds up to n IDs of q (a host substring matching many
// hosts, its only filter; a cursor in BeforeID, or idLow for a Newer
// page) from the days' host counters, looking for its edge among the
// first span days that hold IDs of its range. ok is false when they
// cannot answer and the caller must read the page another way.
func (q RefusalQuery) hostDayIDs(db *gorm.DB, n, span int) (ids []int64, ok bool, err error) {
	err = db.Transaction(func(tx *gorm.DB) error {
		ids, ok, err = q.hostDayIDsIn(tx, n, span)
		return err
	}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	return ids, ok, err
}

func (q RefusalQuery) hostDayIDsIn(db *gorm.DB, n, span int) ([]int64, bool, error) {
	lo, hi, err := q.idSpan(db)
	if err != nil || hi < lo {
		return nil, err == nil, err
	}
	var days []dayIDs
	if err := db.Raw("SELECT (period AT TIME ZONE 'UTC')::date AS day, MIN(min_id) AS low, MAX(max_id) AS high, bool_or(min_id = 0 OR max_id = 0) AS unknown, SUM(n) AS rows " +
		"FROM refusal_counts WHERE " + dimIs(dimTotal) + " GROUP BY 1 ORDER BY 1").Scan(&days).Error; err != nil {
		return nil, false, err
	}
	var found []hostDayRow
	var likely []int64 // IDs of rows taken to exist, one per host and day
	// A day of unknown range (its host counters deleted by the purge, its
	// rows but a few written late) may hold any ID: its matching rows in
	// the span are read themselves, each an exact range of its host.
	for _, d := range days {
		if !d.Unknown {
			continue
		}
		if d.Rows > hostDayMaxRowsRead {
			return nil, false, nil
		}
		var rows []struct {
			ID   int64
			Host string
		}
		if err := db.Raw("SELECT id, host FROM refusals WHERE time >= ? AND time < ? AND id BETWEEN ? AND ? AND "+hostContains,
			d.Day, nextDay(d.Day), lo, hi, containsPattern(q.Host)).Scan(&rows).Error; err != nil {
			return nil, false, err
		}
		for _, r := range rows {
			found = append(found, hostDayRow{Value: r.Host, MinID: r.ID, MaxID: r.ID})
			likely = append(likely, r.ID)
		}
	}
	walk := daysHolding(days, lo, hi, q.ascending)
	if len(walk) == 0 && len(found) == 0 {
		return nil, true, nil
	}

	// Step 1: the edge.
	covered := 0 // walk[:covered] is read, or holds no row of the page
	for reads := 0; covered < len(walk); reads++ {
		day, next, err := q.nextDayToRead(db, walk, covered, likely, n, span, lo, hi)
		if err != nil {
			return nil, false, err
		}
		covered = next
		if day.IsZero() {
			break
		}
		if reads == hostDayReads {
			return nil, false, nil
		}
		rows, err := q.hostDayRows(db, day, lo, hi, n)
		if err != nil {
			return nil, false, err
		}
		for _, r := range rows {
			switch {
			case r.MinID == 0 || r.MaxID == 0:
				return nil, false, nil
			case !q.ascending && r.MaxID <= hi:
				likely = append(likely, r.MaxID)
			case q.ascending && r.MinID >= lo:
				likely = append(likely, r.MinID)
			}
		}
		found = append(found, rows...)
		covered++
	}
	// Step 2: every day that may hold a row of the page was read, or holds
	// no matching host (nextDayToRead walks past the others only once n
	// likely rows bound the page); short of that, the walk stopped at its
	// span or its reads.
	if covered < len(walk) {
		return nil, false, nil
	}
	whole := len(likely) < n // every row of the range is in found's hosts
	page := q
	page.Host, page.HostExact, page.BeforeID = "", false, 0
	page.idLow, page.idHigh = lo, hi
	if !whole {
		page.idLow, page.idHigh = q.edgeSpan(likely, n, lo, hi)
	}
	seen := map[string]bool{}
	for _, r := range found {
		if r.MinID <= page.idHigh && r.MaxID >= page.idLow && !seen[r.Value] {
			seen[r.Value] = true
			page.hostIn = append(page.hostIn, r.Value)
		}
	}
	if len(page.hostIn) > hostDayMaxHosts {
		return nil, false, nil
	}
	if len(page.hostIn) == 0 {
		return nil, whole, nil
	}
	// Step 3: the page, checked.
	ids, err := page.perHostIDs(db, n)
	if err != nil {
		return nil, false, err
	}
	return ids, whole || len(ids) == n, nil
}

// edgeSpan is the IDs of the page's rows once n likely rows are known:
// from the nth largest to hi (from lo to the nth smallest, for a Newer
// page).
func (q RefusalQuery) edgeSpan(likely []int64, n int, lo, hi int64) (int64, int64) {
	likely = slices.Clone(likely)
	slices.Sort(likely)
	if q.ascending {
		return lo, likely[n-1]
	}
	return likely[len(likely)-n], hi
}

// nextDayToRead returns the next day of walk, from walk[covered], whose
// host counters step 1 reads, and the new covered (that day's index):
// while fewer than n likely rows are known, the next day naming a
// matching host among the first span days; then the next such day that
// may hold a row of the span the likely rows bound (one holding rows
// written late), however far. A zero day: no day is left to read, and
// covered says how far the walk got.
func (q RefusalQuery) nextDayToRead(db *gorm.DB, walk []dayIDs, covered int, likely []int64, n, span int, lo, hi int64) (time.Time, int, error) {
	limit, holds := min(span, len(walk)), func(dayIDs) bool { return true }
	if len(likely) >= n {
		low, high := q.edgeSpan(likely, n, lo, hi)
		limit, holds = len(walk), func(d dayIDs) bool { return d.Low <= high && d.High >= low }
	}
	for covered < limit {
		i := slices.IndexFunc(walk[covered:limit], holds)
		if i < 0 {
			return time.Time{}, limit, nil
		}
		covered += i
		near := walk[covered:min(covered+hostDaySpan, limit)]
		day, any, err := q.nextHostDay(db, near, true)
		if err == nil && !any && covered+len(near) < limit {
			// None near the cursor: the first beyond, through the host
			// counters' trigram index, the days between left unread.
			day, any, err = q.nextHostDay(db, walk[covered+len(near):limit], false)
		}
		if err != nil || !any {
			return time.Time{}, limit, err
		}
		// The first day at or beyond the one found: the days before it
		// name no matching host.
		i = slices.IndexFunc(walk[covered:limit], func(d dayIDs) bool { return !q.beyondDay(day, d.Day) })
		if i < 0 {
			return time.Time{}, limit, nil
		}
		covered += i
		if walk[covered].Day.Equal(day) && holds(walk[covered]) {
			return day, covered, nil
		}
		if walk[covered].Day.Equal(day) {
			covered++ // it names a matching host, but holds no row of the span
		}
		// Otherwise the day found lies between the walk's, holding none
		// of the page's IDs.
	}
	return time.Time{}, covered, nil
}

// idSpan is the IDs q's page may have, both ends included: above idLow
// and below the cursor, up to the log's newest row.
func (q RefusalQuery) idSpan(db *gorm.DB) (lo, hi int64, err error) {
	lo = max(q.idLow, 1)
	switch {
	case q.BeforeID > 0 && q.idHigh > 0:
		hi = min(q.BeforeID-1, q.idHigh)
	case q.BeforeID > 0:
		hi = q.BeforeID - 1
	case q.idHigh > 0:
		hi = q.idHigh
	default:
		err = db.Raw("SELECT COALESCE(MAX(id), 0) FROM refusals").Scan(&hi).Error
	}
	return lo, hi, err
}

// daysHolding returns the days of known range (in order, oldest first)
// that may hold IDs in [lo, hi], in the page's walking order: newest
// first, or oldest first for a Newer page.
func daysHolding(days []dayIDs, lo, hi int64, ascending bool) []dayIDs {
	var out []dayIDs
	for _, d := range days {
		if !d.Unknown && d.Low <= hi && d.High >= lo {
			out = append(out, d)
		}
	}
	if !ascending {
		slices.Reverse(out)
	}
	return out
}

// beyondDay reports whether day a comes after day b in the page's walk.
func (q RefusalQuery) beyondDay(a, b time.Time) bool {
	if q.ascending {
		return a.After(b)
	}
	return a.Before(b)
}

// nextHostDay returns the first of days, in the walk's order, on which a
// matching host was refused. Their values are lower-case (storedHost,
// and migration 21 for older rows), as the pattern is, so a plain LIKE
// matches them. near reads the host counters' primary key (period, dim,
// value) in the walk's order, matching the substring on its entries,
// and stops at the first: right for days close by, where a broad
// substring is found at once. Otherwise the first is taken from every
// match in the days, through the host counters' trigram index
// (migration 21): an expression of the period, so that the planner does
// not walk the primary key in order through the days between.
func (q RefusalQuery) nextHostDay(db *gorm.DB, days []dayIDs, near bool) (time.Time, bool, error) {
	first, last := days[0].Day, days[len(days)-1].Day
	if first.After(last) {
		first, last = last, first
	}
	where := dimIs(dimHost) + " AND period BETWEEN ? AND ? AND value LIKE ? ESCAPE '\\'"
	stmt := "SELECT period FROM refusal_counts WHERE " + where + " ORDER BY period " + q.direction() + " LIMIT 1"
	if !near {
		agg := "MAX"
		if q.ascending {
			agg = "MIN"
		}
		stmt = "SELECT " + agg + "(period + INTERVAL '0 seconds') AS period FROM refusal_counts WHERE " + where
	}
	var found []sql.NullTime
	if err := db.Raw(stmt, first, last, containsPattern(q.Host)).Scan(&found).Error; err != nil || len(found) == 0 || !found[0].Valid {
		return time.Time{}, false, err
	}
	return found[0].Time.UTC(), true, nil
}

// hostDayRows returns a day's matching hosts whose ranges reach into
// [lo, hi]: the n whose largest ID below hi is the largest (smallest ID
// above lo is the smallest, for a Newer page), every host whose range
// straddles the cursor, and every host whose range is unknown.
func (q RefusalQuery) hostDayRows(db *gorm.DB, day time.Time, lo, hi int64, n int) ([]hostDayRow, error) {
	rank, straddles := "CASE WHEN max_id > ? THEN 0 ELSE max_id END DESC", "max_id > ?"
	edge := hi
	if q.ascending {
		rank, straddles = "CASE WHEN min_id < ? THEN 9223372036854775807 ELSE min_id END", "min_id < ?"
		edge = lo
	}
	var rows []hostDayRow
	err := db.Raw("SELECT value, min_id, max_id FROM (SELECT value, min_id, max_id, row_number() OVER (ORDER BY "+rank+") AS r "+
		"FROM refusal_counts WHERE "+dimIs(dimHost)+" AND period = ? AND value LIKE ? ESCAPE '\\' "+
		"AND (min_id = 0 OR max_id = 0 OR (min_id <= ? AND max_id >= ?))) AS x "+
		"WHERE r <= ? OR "+straddles+" OR min_id = 0 OR max_id = 0",
		edge, day, containsPattern(q.Host), hi, lo, n, edge).Scan(&rows).Error
	return rows, err
}
