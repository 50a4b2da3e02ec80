package models

import (
	"context"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"
)

// refusalCount is the refusal log's counters, kept in the same transaction
// as every batch insert, so a view never counts rows: with 2.6 million
// refusals today, "refusals today" and "most refused hosts today" had
// recounted the day on every view (1.2–2.4 s), exactly when a flood
// brings support to the page.
//
// Table refusal_counts, primary key (period, dim, value, kind), and n:
//   - dim "total" (value ""), "tool" and "agent" count per hour: period is
//     the hour's start (UTC); an Overview chart reads them by hour and kind;
//   - dim "host" counts per day: period is the day's start (UTC). Hosts are
//     the one dimension a hostile page controls, so a day's host rows are
//     bounded by the day's distinct hosts, not multiplied by 24 hours.
//
// One dimension per row, never their cross product: a flood over 5,000
// hosts and 40 agents must not make as many counter rows as refusals.
// Rows of periods the retention purge emptied are deleted.
type refusalCount struct {
	Period time.Time `gorm:"primaryKey;autoIncrement:false"`
	Dim    string    `gorm:"primaryKey"`
	Value  string    `gorm:"primaryKey"`
	Kind   string    `gorm:"primaryKey"`
	N      int64     `gorm:"not null;default:0"`
}

func (refusalCount) TableName() string { return "refusal_counts" }

// The dimensions of refusal_counts.
const (
	dimTotal = "total"
	dimTool  = "tool"
	dimAgent = "agent"
	dimHost  = "host"
)

type countKey struct {
	period           time.Time
	dim, value, kind string
}

func utcDay(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// countRows aggregates rows by counter key.
func countRows(rows []Refusal) map[countKey]int64 {
	out := make(map[countKey]int64, 16)
	for i := range rows {
		r := &rows[i]
		hour := r.Time.UTC().Truncate(time.Hour)
		n := max(r.Count, 1) // an aggregated row counts every request it stands for
		out[countKey{hour, dimTotal, "", r.Kind}] += n
		out[countKey{hour, dimTool, r.Tool, r.Kind}] += n
		out[countKey{hour, dimAgent, r.Agent, r.Kind}] += n
		out[countKey{utcDay(r.Time), dimHost, r.Host, r.Kind}] += n
	}
	return out
}

// countUpsert adds to the counters. ON CONFLICT … DO UPDATE is standard
// in SQLite (3.24+) and PostgreSQL.
var countUpsert = rowsStmt{
	head: "INSERT INTO refusal_counts (period, dim, value, kind, n) VALUES ",
	tail: " ON CONFLICT (period, dim, value, kind) DO UPDATE SET n = refusal_counts.n + excluded.n",
	cols: 5,
}

// addCounts adds counts to the counters, inside the caller's transaction.
func addCounts(tx sqlTx, counts map[countKey]int64) error {
	keys := make([]countKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	// A fixed order: two writers upserting the same keys in PostgreSQL
	// take their row locks in the same order and cannot deadlock.
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	args := make([]any, 0, len(keys)*countUpsert.cols)
	for _, k := range keys {
		args = append(args, k.period, k.dim, k.value, k.kind, counts[k])
	}
	if err := countUpsert.exec(tx, args); err != nil {
		return fmt.Errorf("updating the refusal counters: %w", err)
	}
	return nil
}

func (a countKey) less(b countKey) bool {
	if !a.period.Equal(b.period) {
		return a.period.Before(b.period)
	}
	if a.dim != b.dim {
		return a.dim < b.dim
	}
	if a.value != b.value {
		return a.value < b.value
	}
	return a.kind < b.kind
}

// splitAt divides [since, …) into a head before the first whole period
// (an hour, or a day), which is counted from the refusals themselves
// through the time index, and the whole periods from there, which the
// counters answer.
func splitAt(since time.Time, period func(time.Time) time.Time, next func(time.Time) time.Time) (head, whole time.Time) {
	since = since.UTC()
	whole = period(since)
	if whole.Before(since) {
		whole = next(whole)
	}
	return since, whole
}

func hourOf(t time.Time) time.Time   { return t.Truncate(time.Hour) }
func nextHour(t time.Time) time.Time { return t.Add(time.Hour) }
func nextDay(t time.Time) time.Time  { return t.AddDate(0, 0, 1) }

// CountRefusalsSince counts refusals with Time at or after since: whole
// hours from the counters, the part-hour before them from the rows.
func (s *Store) CountRefusalsSince(ctx context.Context, since time.Time) (int64, error) {
	head, hours := splitAt(since, hourOf, nextHour)
	db := s.r.WithContext(ctx)
	var fromCounts, fromRows int64
	if err := db.Raw("SELECT COALESCE(SUM(n), 0) FROM refusal_counts WHERE dim = ? AND period >= ?", dimTotal, hours).Scan(&fromCounts).Error; err != nil {
		return 0, fmt.Errorf("models: counting refusals since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	if head.Before(hours) {
		if err := db.Model(&Refusal{}).Select("COALESCE(SUM(repeat_count), 0)").Where("time >= ? AND time < ?", head, hours).Scan(&fromRows).Error; err != nil {
			return 0, fmt.Errorf("models: counting refusals since %s: %w", since.UTC().Format(time.RFC3339), err)
		}
	}
	return fromCounts + fromRows, nil
}

// HostCount is one row of TopRefusedHosts.
type HostCount struct {
	Host  string
	Count int64
}

// TopRefusedHosts returns the n hosts refused most often since the given
// time, most refused first (ties by host name): whole days from the
// counters, the part-day before them from the rows (none for the log's
// "today", which starts at midnight UTC).
func (s *Store) TopRefusedHosts(ctx context.Context, since time.Time, n int) ([]HostCount, error) {
	if n < 1 || n > MaxRefusalPage {
		return nil, fmt.Errorf("models: top hosts count %d is out of range; use 1 to %d", n, MaxRefusalPage)
	}
	head, days := splitAt(since, utcDay, nextDay)
	db := s.r.WithContext(ctx)
	var counted, part []HostCount
	err := db.Table("refusal_counts").Select("value AS host, SUM(n) AS count").Where("dim = ? AND period >= ?", dimHost, days).Group("value").Scan(&counted).Error
	if err == nil && head.Before(days) {
		err = db.Table("refusals").Select("host, SUM(repeat_count) AS count").Where("time >= ? AND time < ?", head, days).Group("host").Scan(&part).Error
	}
	if err != nil {
		return nil, fmt.Errorf("models: top refused hosts since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	sum := make(map[string]int64, len(counted)+len(part))
	for _, h := range append(counted, part...) {
		sum[h.Host] += h.Count
	}
	out := make([]HostCount, 0, len(sum))
	for h, c := range sum {
		out = append(out, HostCount{Host: h, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Host < out[j].Host
	})
	return out[:min(n, len(out))], nil
}

// backfillRefusalCounts fills the counters once for a database whose
// refusals predate them: one INSERT … SELECT … GROUP BY, so the database
// does the counting (seconds for millions of rows, where reading them out
// would take minutes), in one transaction, so no writer adds rows in
// between. It is not bound by the open's deadline: a big log takes as
// long as it takes, once.
func backfillRefusalCounts(db *gorm.DB) error {
	db = db.WithContext(context.WithoutCancel(db.Statement.Context))
	var have int64
	if err := db.Raw("SELECT COUNT(*) FROM (SELECT 1 FROM refusal_counts LIMIT 1) c").Scan(&have).Error; err != nil || have > 0 {
		return err
	}
	hour, day := "date_trunc('hour', time)", "date_trunc('day', time)"
	if isSQLite(db) {
		// Times are stored as text, "2006-01-02 15:04:05.999999999+00:00"
		// in UTC, the form a bound time.Time takes: cut to the hour, the day.
		hour, day = "substr(time, 1, 13) || ':00:00+00:00'", "substr(time, 1, 10) || ' 00:00:00+00:00'"
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		for _, d := range []struct{ period, dim, value string }{
			{hour, dimTotal, "''"}, {hour, dimTool, "tool"}, {hour, dimAgent, "agent"}, {day, dimHost, "host"},
		} {
			// d holds constants only, never input.
			err := tx.Exec("INSERT INTO refusal_counts (period, dim, value, kind, n) SELECT " + d.period + ", '" + d.dim + "', " + d.value +
				", kind, COUNT(*) FROM refusals GROUP BY 1, 3, 4").Error
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("filling the refusal counters: %w", err)
	}
	return nil
}

// recountFrom rebuilds the counters of the hour and the day cutoff falls
// in from their remaining rows, after the purge removed part of them. The
// rows are counted on a reader (a day of a flood is millions), and only
// the short rewrite takes the write lock.
func (s *Store) recountFrom(ctx context.Context, cutoff time.Time) error {
	hour, day := hourOf(cutoff), utcDay(cutoff)
	type group struct {
		Value, Kind string
		N           int64
	}
	counts := map[countKey]int64{}
	read := func(col, dim string, from, to time.Time) error {
		var groups []group
		by := "kind"
		if dim != dimTotal {
			by = col + ", kind"
		}
		err := s.r.WithContext(ctx).Table("refusals").Select(col+" AS value, kind, SUM(repeat_count) AS n").
			Where("time >= ? AND time < ?", from, to).Group(by).Scan(&groups).Error
		for _, g := range groups {
			counts[countKey{from, dim, g.Value, g.Kind}] = g.N
		}
		return err
	}
	if !hour.Equal(cutoff) {
		for _, d := range []struct{ col, dim string }{{"''", dimTotal}, {"tool", dimTool}, {"agent", dimAgent}} {
			if err := read(d.col, d.dim, hour, nextHour(hour)); err != nil {
				return err
			}
		}
	}
	if !day.Equal(cutoff) {
		if err := read("host", dimHost, day, nextDay(day)); err != nil {
			return err
		}
	}
	return s.w.WithContext(ctx).Transaction(func(g *gorm.DB) error {
		// A period that starts at the cutoff lost no rows: its counters
		// stay, and it was not read above.
		if !hour.Equal(cutoff) {
			if err := g.Exec("DELETE FROM refusal_counts WHERE dim <> ? AND period = ?", dimHost, hour).Error; err != nil {
				return err
			}
		}
		if !day.Equal(cutoff) {
			if err := g.Exec("DELETE FROM refusal_counts WHERE dim = ? AND period = ?", dimHost, day).Error; err != nil {
				return err
			}
		}
		tx, err := newSQLTx(ctx, g, &s.wStmts)
		if err != nil {
			return err
		}
		return addCounts(tx, counts)
	})
}
