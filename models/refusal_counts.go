package models

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
)

// refusalCount is the refusal log's counters: how many refusals each hour
// (UTC) of each kind, tool, agent and host. They are kept in the same
// transaction as every batch insert, so a view never counts rows: with
// 2.6 million refusals today, "refusals today" and "most refused hosts
// today" had recounted the day on every view (1.2–2.4 s), exactly when a
// flood brings support to the page. An hourly grain also serves charts.
//
// Table refusal_counts: primary key (hour, kind, tool, agent, host), and
// n, the count. Rows of hours the retention purge emptied are deleted.
type refusalCount struct {
	Hour  time.Time `gorm:"primaryKey;autoIncrement:false"`
	Kind  string    `gorm:"primaryKey"`
	Tool  string    `gorm:"primaryKey"`
	Agent string    `gorm:"primaryKey"`
	Host  string    `gorm:"primaryKey"`
	N     int64     `gorm:"not null;default:0"`
}

func (refusalCount) TableName() string { return "refusal_counts" }

type countKey struct {
	hour                    time.Time
	kind, tool, agent, host string
}

// countRows aggregates rows by counter key.
func countRows(rows []Refusal) map[countKey]int64 {
	out := make(map[countKey]int64, 8)
	for i := range rows {
		r := &rows[i]
		out[countKey{r.Time.UTC().Truncate(time.Hour), r.Kind, r.Tool, r.Agent, r.Host}]++
	}
	return out
}

// countChunk keeps one upsert under every engine's bound on parameters
// (6 a row: 3,000, below SQLite's 32,766 and PostgreSQL's 65,535).
const countChunk = 500

// addCounts adds counts to the counters, inside the caller's transaction.
// ON CONFLICT … DO UPDATE is standard in SQLite (3.24+) and PostgreSQL.
func addCounts(tx *gorm.DB, counts map[countKey]int64) error {
	keys := make([]countKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	// A fixed order: two writers upserting the same keys in PostgreSQL
	// take their row locks in the same order and cannot deadlock.
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	for start := 0; start < len(keys); start += countChunk {
		part := keys[start:min(start+countChunk, len(keys))]
		var sb strings.Builder
		sb.WriteString("INSERT INTO refusal_counts (hour, kind, tool, agent, host, n) VALUES ")
		args := make([]any, 0, len(part)*6)
		for i, k := range part {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(?,?,?,?,?,?)")
			args = append(args, k.hour, k.kind, k.tool, k.agent, k.host, counts[k])
		}
		sb.WriteString(" ON CONFLICT (hour, kind, tool, agent, host) DO UPDATE SET n = refusal_counts.n + excluded.n")
		if err := tx.Exec(sb.String(), args...).Error; err != nil {
			return fmt.Errorf("updating the refusal counters: %w", err)
		}
	}
	return nil
}

func (a countKey) less(b countKey) bool {
	if !a.hour.Equal(b.hour) {
		return a.hour.Before(b.hour)
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	if a.tool != b.tool {
		return a.tool < b.tool
	}
	if a.agent != b.agent {
		return a.agent < b.agent
	}
	return a.host < b.host
}

// splitAtHour divides [since, …) into a head before the first whole hour,
// which is counted from the refusals themselves (at most an hour of rows,
// through the time index), and the whole hours from there, which the
// counters answer.
func splitAtHour(since time.Time) (head time.Time, hours time.Time) {
	since = since.UTC()
	hours = since.Truncate(time.Hour)
	if hours.Before(since) {
		hours = hours.Add(time.Hour)
	}
	return since, hours
}

// CountRefusalsSince counts refusals with Time at or after since: whole
// hours from the counters, the part-hour before them from the rows.
func (s *Store) CountRefusalsSince(ctx context.Context, since time.Time) (int64, error) {
	head, hours := splitAtHour(since)
	db := s.r.WithContext(ctx)
	var fromCounts, fromRows int64
	if err := db.Raw("SELECT COALESCE(SUM(n), 0) FROM refusal_counts WHERE hour >= ?", hours).Scan(&fromCounts).Error; err != nil {
		return 0, fmt.Errorf("models: counting refusals since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	if head.Before(hours) {
		if err := db.Model(&Refusal{}).Where("time >= ? AND time < ?", head, hours).Count(&fromRows).Error; err != nil {
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
// time, most refused first (ties by host name): whole hours from the
// counters, the part-hour before them from the rows.
func (s *Store) TopRefusedHosts(ctx context.Context, since time.Time, n int) ([]HostCount, error) {
	if n < 1 || n > MaxRefusalPage {
		return nil, fmt.Errorf("models: top hosts count %d is out of range; use 1 to %d", n, MaxRefusalPage)
	}
	head, hours := splitAtHour(since)
	db := s.r.WithContext(ctx)
	var counted, part []HostCount
	err := db.Table("refusal_counts").Select("host, SUM(n) AS count").Where("hour >= ?", hours).Group("host").Scan(&counted).Error
	if err == nil && head.Before(hours) {
		err = db.Table("refusals").Select("host, COUNT(*) AS count").Where("time >= ? AND time < ?", head, hours).Group("host").Scan(&part).Error
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
	hour := "date_trunc('hour', time)"
	if isSQLite(db) {
		// Times are stored as text, "2006-01-02 15:04:05.999999999+00:00"
		// in UTC, the form a bound time.Time takes: cut to the hour.
		hour = "substr(time, 1, 13) || ':00:00+00:00'"
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		return tx.Exec("INSERT INTO refusal_counts (hour, kind, tool, agent, host, n) SELECT " + hour +
			", kind, tool, agent, host, COUNT(*) FROM refusals GROUP BY 1, 2, 3, 4, 5").Error
	})
	if err != nil {
		return fmt.Errorf("filling the refusal counters: %w", err)
	}
	return nil
}

// recountHour rebuilds one hour's counters from its rows, after the purge
// removed part of it.
func recountHour(tx *gorm.DB, hour time.Time) error {
	var groups []struct {
		Kind, Tool, Agent, Host string
		N                       int64
	}
	err := tx.Table("refusals").Select("kind, tool, agent, host, COUNT(*) AS n").
		Where("time >= ? AND time < ?", hour, hour.Add(time.Hour)).Group("kind, tool, agent, host").Scan(&groups).Error
	if err != nil {
		return err
	}
	if err := tx.Exec("DELETE FROM refusal_counts WHERE hour = ?", hour).Error; err != nil {
		return err
	}
	counts := make(map[countKey]int64, len(groups))
	for _, g := range groups {
		counts[countKey{hour, g.Kind, g.Tool, g.Agent, g.Host}] = g.N
	}
	return addCounts(tx, counts)
}
