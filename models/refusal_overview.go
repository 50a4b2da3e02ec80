package models

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// The Overview page's aggregates: refusals over time by class, and the
// most refused hosts, agents and tools. They are plain, portable queries
// (COUNT, SUM(CASE …), GROUP BY on plain columns; no date functions, so
// the buckets are time ranges bound as parameters) over one covering index
// on (time, kind, reason): a bucket's counts are read from the index
// alone, never from the rows. At a million refusals (11,000 a day) the
// page costs about 100 ms of CPU, 35 ms on a reload that finds the closed
// buckets in an OverviewCache (BenchmarkRefusalOverview). An incremental
// counters table can replace the bucket queries later without changing
// RefusalOverview's answer.

// KindNetwork is the kind of a refusal that is a failure of the network
// (DNS, connect, timeout, browser), as the guard names it.
const KindNetwork = "network"

// overviewIndex made the bucket counts index-only before an aggregated
// row (migration 11) could stand for several refusals (migration 7).
const overviewIndex = "CREATE INDEX IF NOT EXISTS idx_refusals_time_kind_reason ON refusals (time, kind, reason)"

// overviewCountIndex makes the bucket sums of repeat_count index-only; it
// replaces overviewIndex (migration 13).
const overviewCountIndex = "CREATE INDEX IF NOT EXISTS idx_refusals_overview ON refusals (time, kind, reason, repeat_count)"

// overviewCounts is migration 13: the Overview counts the refusals each
// row stands for (repeat_count), from an index that holds it.
func overviewCounts(tx *gorm.DB, _ engine) error {
	if err := tx.Exec(overviewCountIndex).Error; err != nil {
		return fmt.Errorf("adding the overview index: %w", err)
	}
	return tx.Exec("DROP INDEX IF EXISTS idx_refusals_time_kind_reason").Error
}

// createOverviewIndex adds the Overview's index to a database that lacks
// it; it is idempotent, and portable SQL.
func createOverviewIndex(db *gorm.DB) error {
	if err := db.Exec(overviewIndex).Error; err != nil {
		return fmt.Errorf("adding the overview index: %w", err)
	}
	return nil
}

// OverviewQuery says what the Overview counts.
type OverviewQuery struct {
	// Now ends the last bucket; the hours and days are whole UTC hours
	// and days, the last one running until Now.
	Now time.Time
	// Hours and Days are how many buckets of each (24 and 30 on the page).
	Hours, Days int
	// AttackReasons are the reasons whose policy refusals count as
	// attack-like rather than ordinary policy (the guard's list).
	AttackReasons []string
	// TopSince starts the window of the top lists; Top is their length.
	TopSince time.Time
	Top      int
	// Cache, when set, keeps closed buckets' counts between calls.
	Cache *OverviewCache
}

// OverviewBucket is one bar: refusals with Start <= time < End, by class.
type OverviewBucket struct {
	Start, End time.Time
	// Attack counts policy refusals whose reason is attack-like, Policy
	// the other policy refusals, Network the network failures.
	Attack, Policy, Network int64
}

// Total is the bucket's refusals of every class.
func (b OverviewBucket) Total() int64 { return b.Attack + b.Policy + b.Network }

// NameCount is one row of a top list.
type NameCount struct {
	Name  string
	Count int64
}

// ReasonCount is one reason's refusals in the top lists' window.
type ReasonCount struct {
	Kind, Reason string
	Count        int64
}

// RefusalOverview is what the Overview page shows.
type RefusalOverview struct {
	Hours, Days []OverviewBucket
	// TopHosts, TopAgents and TopTools cover TopSince until Now, most
	// refused first (ties by name); refusals without a host or agent are
	// not listed as one.
	TopHosts, TopAgents, TopTools []NameCount
	// Reasons are every kind and reason in the same window, most first.
	Reasons []ReasonCount
}

// RefusalOverview counts the refusals the Overview shows.
func (s *Store) RefusalOverview(ctx context.Context, q OverviewQuery) (RefusalOverview, error) {
	if q.Hours < 1 || q.Hours > 24*31 || q.Days < 1 || q.Days > 366 || q.Top < 1 || q.Top > MaxRefusalPage {
		return RefusalOverview{}, fmt.Errorf("models: overview of %d hours, %d days, top %d is out of range; use 1-744 hours, 1-366 days, top 1-%d", q.Hours, q.Days, q.Top, MaxRefusalPage)
	}
	now := q.Now.UTC()
	db := s.r.WithContext(ctx)
	var out RefusalOverview
	var err error
	hour := now.Truncate(time.Hour)
	if out.Hours, err = countBuckets(db, q.Cache, q.AttackReasons, hour.Add(-time.Duration(q.Hours-1)*time.Hour), q.Hours, func(t time.Time) time.Time { return t.Add(time.Hour) }, now); err != nil {
		return RefusalOverview{}, err
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if out.Days, err = countBuckets(db, q.Cache, q.AttackReasons, day.AddDate(0, 0, -(q.Days-1)), q.Days, func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }, now); err != nil {
		return RefusalOverview{}, err
	}
	if err := out.countTops(db, q.TopSince.UTC(), now, q.Top); err != nil {
		return RefusalOverview{}, err
	}
	return out, nil
}

// countBuckets counts n consecutive buckets from start, each ending where
// next says; the last one ends at now. One query per bucket: each is a
// range scan of the covering index, and bound times are portable where a
// date function is not.
func countBuckets(db *gorm.DB, cache *OverviewCache, attack []string, start time.Time, n int, next func(time.Time) time.Time, now time.Time) ([]OverviewBucket, error) {
	// An empty IN () is not valid SQL everywhere; no reason matches "".
	if len(attack) == 0 {
		attack = []string{""}
	}
	// An aggregated row stands for repeat_count refusals (a burst).
	sel := "COALESCE(SUM(repeat_count), 0) AS total, " +
		"COALESCE(SUM(CASE WHEN kind = ? THEN repeat_count ELSE 0 END), 0) AS network, " +
		"COALESCE(SUM(CASE WHEN kind <> ? AND reason IN ? THEN repeat_count ELSE 0 END), 0) AS attack"
	out := make([]OverviewBucket, n)
	for i := range out {
		if b, ok := cache.get(start, next(start), attack); ok {
			out[i] = b
			start = next(start)
			continue
		}
		end := next(start)
		if i == n-1 {
			end = now.Add(time.Nanosecond)
		}
		var c struct{ Total, Network, Attack int64 }
		err := db.Table("refusals").Select(sel, KindNetwork, KindNetwork, attack).
			Where("time >= ? AND time < ?", start, end).Scan(&c).Error
		if err != nil {
			return nil, fmt.Errorf("models: counting refusals from %s: %w", start.Format(time.RFC3339), err)
		}
		out[i] = OverviewBucket{Start: start, End: next(start), Attack: c.Attack, Network: c.Network, Policy: c.Total - c.Attack - c.Network}
		if i < n-1 {
			cache.put(out[i], attack, now)
		}
		start = next(start)
	}
	return out, nil
}

// countTops fills the top lists and reasons for since until now. Each
// list is one grouped range scan of the window that returns only its top
// rows (plus one, for the blank name left out).
func (o *RefusalOverview) countTops(db *gorm.DB, since, now time.Time, top int) error {
	until := now.Add(time.Nanosecond)
	for _, l := range []struct {
		col string
		dst *[]NameCount
	}{{"host", &o.TopHosts}, {"agent", &o.TopAgents}, {"tool", &o.TopTools}} {
		// Grouped by an expression, not the bare column: given GROUP BY
		// host, SQLite walks the whole host index (every refusal ever)
		// instead of the window's range of the time index. The expression
		// means the same in any SQL and leaves the time index the only
		// choice.
		var rows []NameCount
		err := db.Raw("SELECT "+l.col+" || '' AS name, SUM(repeat_count) AS count FROM refusals WHERE time >= ? AND time < ? "+
			"GROUP BY "+l.col+" || '' ORDER BY count DESC, name LIMIT ?", since, until, top+1).Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("models: top refused %ss: %w", l.col, err)
		}
		rows = slices.DeleteFunc(rows, func(r NameCount) bool { return r.Name == "" })
		*l.dst = rows[:min(top, len(rows))]
	}
	if err := db.Raw("SELECT kind || '' AS kind, reason || '' AS reason, SUM(repeat_count) AS count FROM refusals WHERE time >= ? AND time < ? "+
		"GROUP BY kind || '', reason || ''", since, until).Scan(&o.Reasons).Error; err != nil {
		return fmt.Errorf("models: refusals by reason: %w", err)
	}
	slices.SortFunc(o.Reasons, func(a, b ReasonCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Reason, b.Reason))
	})
	return nil
}
