package models

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// A time filter as an ID range, on PostgreSQL. The log's indexes are
// (column, id) (refusal_pg_indexes.go): "code = ? ORDER BY id DESC"
// walks one of them and stops after a page. Add "since the flood day" and
// the walk filters on time instead, row by row: when the code is rare
// after that day (or absent), it read every older row of the code to
// find none (5.9 s at ten million rows), and a one-day window a month
// back read the month after it (about 1 s).
//
// The counters know better. Each hour's "total" counter also keeps the
// smallest and largest ID of the rows it counts (migration 15, kept up in
// the insert's transaction, so a reader sees a row and its counter
// together). A row timed in [since, until) is counted in an hour from
// hour(since) to before until, so its ID lies within those hours' ID
// range: the filter gains "id BETWEEN low AND high", which every (column,
// id) index answers as a range, and the time conditions stay, so the
// answer is exact even where IDs do not follow time (a batch written
// late, a clock behind another). An unknown bound (0: counters from
// before migration 15 not yet filled) is left out.

// idRange returns the IDs a row in [since, until) may have: low and high,
// 0 for no bound; none reports that no row is in that time.
func idRange(db *gorm.DB, since, until time.Time) (low, high int64, none bool, err error) {
	q := db.Table("refusal_counts").Select("COUNT(*) AS n, COALESCE(MIN(min_id), 0) AS low, COALESCE(MAX(max_id), 0) AS high, COALESCE(MIN(max_id), 0) AS unknown").
		Where(dimIs(dimTotal))
	if !since.IsZero() {
		q = q.Where("period >= ?", hourOf(since.UTC()))
	}
	if !until.IsZero() {
		q = q.Where("period < ?", until.UTC())
	}
	var r struct{ N, Low, High, Unknown int64 }
	if err := q.Scan(&r).Error; err != nil {
		return 0, 0, false, fmt.Errorf("models: reading the hours' ID ranges: %w", err)
	}
	if r.N == 0 {
		return 0, 0, true, nil
	}
	if r.Unknown == 0 {
		r.High = 0 // an hour's largest ID is unknown: no upper bound
	}
	return r.Low, r.High, false, nil
}

// hourlyCountsIndex lists the hourly counters by dimension and period:
// the counters' primary key leads with the period, so "the totals (or
// the reasons) of 30 days" read the 30 days' counters of every
// dimension, the days' hosts included (300,000 rows, 0.4 s at ten
// million refusals). Partial, leaving the hosts out: their upserts, one
// per host in a batch, keep no entry in it, and a host query reads a day
// or two by the primary key. PostgreSQL only, the engine at that scale.
const hourlyCountsIndex = "CREATE INDEX IF NOT EXISTS idx_refusal_counts_hourly ON refusal_counts (dim, period) WHERE dim <> 'host'"

// counterIDRanges is migration 15: the counters' ID range columns, filled
// for the hours' totals from the rows already there (only the totals keep
// one), and on PostgreSQL the hourly counters' index and the time
// index with each row's count.
func counterIDRanges(tx *gorm.DB, e engine) error {
	if err := tx.AutoMigrate(&refusalCount{}); err != nil {
		return err
	}
	if err := tx.Exec("DELETE FROM refusal_counts WHERE dim = ?", dimTotal).Error; err != nil {
		return err
	}
	if err := fillCounters(tx, counterDims[:1], "SUM(repeat_count)", true); err != nil {
		return err
	}
	if e != enginePostgres {
		return nil
	}
	for _, stmt := range []string{hourlyCountsIndex, timeCountIndex, "DROP INDEX IF EXISTS idx_refusals_time_id"} {
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// timeCountIndex replaces the (time, id) index of migration 12 on
// PostgreSQL: the same order, plus each row's repeat_count, so that
// summing a stretch of time (the part hour before the counters, the
// rows after "now") reads the index alone, as the Overview's index
// (time, kind, reason, repeat_count), dropped by migration 14, let it:
// without it, the half hour of a flood (54,000 rows) took 0.2 s.
const timeCountIndex = "CREATE INDEX IF NOT EXISTS idx_refusals_time_id_count ON refusals (time, id) INCLUDE (repeat_count)"

// boundIDs adds the ID range of q's time filter to q, on PostgreSQL,
// and on SQLite for a windowed search (SQLite walks its indexes in rowid
// order and bounds time well enough at its million rows, but a search's
// windows are ranges of IDs: without the range, a search of an old day
// read window after empty window of newer rows before reaching it);
// none reports that no row is in that time.
func (q RefusalQuery) boundIDs(db *gorm.DB) (RefusalQuery, bool, error) {
	if (!isPostgres(db) && !q.windowed()) || (q.Since.IsZero() && q.Until.IsZero()) {
		return q, false, nil
	}
	// A query that is wrong is told so, even where no row could match:
	// filter checks it (building conditions; on PostgreSQL a search also
	// looks its words' messages up, which the page then keeps).
	if _, err := q.filter(db.Table("refusals")); err != nil {
		return q, false, err
	}
	low, high, none, err := idRange(db, q.Since, q.Until)
	if err != nil {
		return q, false, err
	}
	q.idLow, q.idHigh = low, high
	return q, none, nil
}
