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
// Table refusal_counts, primary key (period, dim, value, kind), and n;
// the dimensions are counterDims:
//   - dim "total" (value ""), "tool", "agent" and "reason" count per
//     hour: period is the hour's start (UTC); the Overview's charts read
//     the reasons by hour and kind (attack-like, policy, network), its top
//     lists the tools, agents and reasons (refusal_counts_window.go);
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
	// MinID and MaxID bound the IDs of the rows counted, for the hours'
	// totals (migration 15) and the days' hosts (migration 21); 0, unknown,
	// in the other dimensions. The hours' ID ranges turn a time filter
	// into an ID range, which every (column, id) index answers
	// (refusal_id_range.go); the hosts' let a broad host substring find
	// its page from a few hosts (refusal_host_days_pg.go). 0 is unknown.
	MinID int64 `gorm:"column:min_id;not null;default:0"`
	MaxID int64 `gorm:"column:max_id;not null;default:0"`
}

func (refusalCount) TableName() string { return "refusal_counts" }

// The dimensions of refusal_counts.
const (
	dimTotal = "total"
	dimTool  = "tool"
	dimAgent = "agent"
	dimHost  = "host"
	// dimReason counts per hour, by the reason's value and kind: the
	// Overview's bars and reasons (migration 14).
	dimReason = "reason"
)

// counterDim is one dimension of the counters: its name in the dim
// column, the refusals' column whose value it counts by ("" for the
// totals, whose value is ""), and its period. Every kind is counted
// apart. counterDims is the one list of them: the writer's aggregation
// (countRows), the migrations' backfill (fillCounters), the purge (which
// takes its rows from the counters by countRows) and the queries all
// read it.
type counterDim struct {
	name, column string
	period       granularity
}

var (
	totalCounter  = counterDim{dimTotal, "", byHour}
	toolCounter   = counterDim{dimTool, "tool", byHour}
	agentCounter  = counterDim{dimAgent, "agent", byHour}
	hostCounter   = counterDim{dimHost, "host", byDay}
	reasonCounter = counterDim{dimReason, "reason", byHour}
)

// counterDims are the counters' dimensions, in the order the migrations
// added them: the first four with migration 8, reason with migration 14
// (the migrations name them by position).
var counterDims = [...]counterDim{totalCounter, toolCounter, agentCounter, hostCounter, reasonCounter}

// valueOf is r's value in the dimension.
func (d counterDim) valueOf(r *Refusal) string {
	if d.column == "" {
		return ""
	}
	return *r.countedField(d.column).(*string)
}

// countedField is the field of r that holds col, one of countedColumns.
func (r *Refusal) countedField(col string) any {
	switch col {
	case "kind":
		return &r.Kind
	case "repeat_count":
		return &r.Count
	case "tool":
		return &r.Tool
	case "agent":
		return &r.Agent
	case "host":
		return &r.Host
	case "reason":
		return &r.Reason
	}
	panic("models: " + col + " is not a counted column")
}

// valueSQL is the dimension's value as SQL over refusals.
func (d counterDim) valueSQL() string {
	if d.column == "" {
		return "''"
	}
	return d.column
}

// countedColumns are the refusals' columns countRows reads, besides the
// ID and time.
func countedColumns() []string {
	cols := []string{"kind", "repeat_count"}
	for _, d := range counterDims {
		if d.column != "" {
			cols = append(cols, d.column)
		}
	}
	return cols
}

type countKey struct {
	period           time.Time
	dim, value, kind string
}

func utcDay(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// count is one counter's change: refusals, and the IDs of their rows.
type count struct{ n, minID, maxID int64 }

func (c *count) add(n, id int64) {
	if c.n == 0 || id < c.minID {
		c.minID = id
	}
	c.maxID = max(c.maxID, id)
	c.n += n
}

// countRows aggregates rows (with their IDs) by counter key.
func countRows(rows []Refusal) map[countKey]count {
	out := make(map[countKey]count, 16)
	add := func(k countKey, r *Refusal) {
		c := out[k]
		c.add(max(r.Count, 1), r.ID) // an aggregated row counts every request it stands for
		out[k] = c
	}
	for i := range rows {
		r := &rows[i]
		hour, day := hourOf(r.Time.UTC()), utcDay(r.Time)
		for _, d := range counterDims {
			period := hour
			if d.period.day {
				period = day
			}
			add(countKey{period, d.name, d.valueOf(r), r.Kind}, r)
		}
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

// totalUpsert adds to the counters that keep an ID range (rangedDim) and
// widens it: CASE, not LEAST or MIN, which the two engines spell
// differently; an unknown bound (0) stays unknown. The hosts' upserts, one
// per host in a batch, were already there; widening two columns of the
// row they update adds no row and no index entry.
var totalUpsert = rowsStmt{
	head: "INSERT INTO refusal_counts (period, dim, value, kind, n, min_id, max_id) VALUES ",
	tail: " ON CONFLICT (period, dim, value, kind) DO UPDATE SET n = refusal_counts.n + excluded.n, " +
		"min_id = CASE WHEN excluded.min_id < refusal_counts.min_id THEN excluded.min_id ELSE refusal_counts.min_id END, " +
		"max_id = CASE WHEN refusal_counts.max_id = 0 OR excluded.max_id < refusal_counts.max_id THEN refusal_counts.max_id ELSE excluded.max_id END",
	cols: 7,
}

// addCounts adds counts to the counters, inside the caller's transaction.
func addCounts(tx sqlTx, counts map[countKey]count) error {
	keys := make([]countKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	// A fixed order: two writers upserting the same keys in PostgreSQL
	// take their row locks in the same order and cannot deadlock.
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	if tx.dialect == "postgres" {
		return pgAddCounts(tx, keys, counts)
	}
	args := make([]any, 0, len(keys)*countUpsert.cols)
	var ranged []any
	for _, k := range keys {
		c := counts[k]
		if rangedDim(k.dim) {
			ranged = append(ranged, k.period, k.dim, k.value, k.kind, c.n, c.minID, c.maxID)
		} else {
			args = append(args, k.period, k.dim, k.value, k.kind, c.n)
		}
	}
	if err := totalUpsert.exec(tx, ranged); err != nil {
		return fmt.Errorf("updating the refusal counters: %w", err)
	}
	if err := countUpsert.exec(tx, args); err != nil {
		return fmt.Errorf("updating the refusal counters: %w", err)
	}
	return nil
}

// rangedDim reports whether the counters of dim keep the ID range of
// their rows: the hours' totals and the days' hosts.
func rangedDim(dim string) bool { return dim == dimTotal || dim == dimHost }

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
	head, hours := splitAt(since, totalCounter.period.floor, totalCounter.period.next)
	db := s.r.WithContext(ctx)
	var fromCounts, fromRows int64
	if err := db.Raw("SELECT COALESCE(SUM(n), 0) FROM refusal_counts WHERE "+dimIs(totalCounter.name)+" AND period >= ?", hours).Scan(&fromCounts).Error; err != nil {
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
// time, most refused first (ties by host name, bytewise), refusals
// without a host left out. It is the Overview's ranking (topValues) over
// a window without an end: for the log's "today", which starts at
// midnight UTC, the database ranks the day's counters and returns only
// the head (a flood's day has 20,000 hosts; reading them all out to rank
// them here took 200-400 ms).
func (s *Store) TopRefusedHosts(ctx context.Context, since time.Time, n int) ([]HostCount, error) {
	if n < 1 || n > MaxRefusalPage {
		return nil, fmt.Errorf("models: top hosts count %d is out of range; use 1 to %d", n, MaxRefusalPage)
	}
	top, err := topValues(s.r.WithContext(ctx), hostCounter, since, noEnd, n)
	if err != nil {
		return nil, fmt.Errorf("models: top refused hosts since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	out := make([]HostCount, len(top))
	for i, t := range top {
		out[i] = HostCount{Host: t.Name, Count: t.Count}
	}
	return out, nil
}

// noEnd ends a window that has no end: every counter's period and every
// row's time is before it.
var noEnd = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// backfillRefusalCounts fills every counter once for a database whose
// refusals were written without them (the benchmarks' seeds).
func backfillRefusalCounts(db *gorm.DB) error {
	return fillCountersOnce(db, counterDims[:], "SUM(repeat_count)", true)
}

// fillCountersOnce fills the counters of dims from the rows when the
// table is empty: migration 8 counts rows (repeat_count came later, with
// migration 11).
func fillCountersOnce(db *gorm.DB, dims []counterDim, n string, ids bool) error {
	var have int64
	if err := db.Raw("SELECT COUNT(*) FROM (SELECT 1 FROM refusal_counts LIMIT 1) c").Scan(&have).Error; err != nil || have > 0 {
		return err
	}
	return fillCounters(db, dims, n, ids)
}

// fillCounters adds the counters of dims for every refusal: one INSERT …
// SELECT … GROUP BY a dimension, so the database does the counting
// (seconds for millions of rows, where reading them out would take
// minutes), in one transaction, so no writer adds rows in between. It is
// not bound by the open's deadline: a big log takes as long as it takes,
// once. n is the count of a group (constants only, never input); ids
// fills the rows' ID ranges (migration 15 added their columns).
func fillCounters(db *gorm.DB, dims []counterDim, n string, ids bool) error {
	db = db.WithContext(context.WithoutCancel(db.Statement.Context))
	period := map[bool]string{false: "date_trunc('hour', time)", true: "date_trunc('day', time)"}
	if isSQLite(db) {
		// Times are stored as text, "2006-01-02 15:04:05.999999999+00:00"
		// in UTC, the form a bound time.Time takes: cut to the hour, the day.
		period = map[bool]string{false: "substr(time, 1, 13) || ':00:00+00:00'", true: "substr(time, 1, 10) || ' 00:00:00+00:00'"}
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		for _, d := range dims {
			// d holds constants only, never input.
			cols, vals := "", ""
			if ids {
				cols, vals = ", min_id, max_id", ", MIN(id), MAX(id)"
			}
			err := tx.Exec("INSERT INTO refusal_counts (period, dim, value, kind, n" + cols + ") SELECT " + period[d.period.day] + ", '" + d.name + "', " + d.valueSQL() +
				", kind, " + n + vals + " FROM refusals GROUP BY 1, 3, 4").Error
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
