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
// most refused hosts, agents and tools. They are read from the refusal
// counters kept with every insert (refusal_counts.go; reasons by hour and
// kind since migration 14), never by counting rows: at ten million rows,
// with 2.6 million refusals on the day shown, counting the rows took over
// 20 s a page (models/refusal_pg_scale_bench_test.go). The answer is the
// rows' count exactly, including aggregated rows (repeat_count) and
// refusals timed after "now", which are left out as before. Closed
// buckets may still come from an OverviewCache.

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
	if out.Hours, err = countBuckets(db, q.Cache, q.AttackReasons, hour.Add(-time.Duration(q.Hours-1)*time.Hour), q.Hours, byHour, now); err != nil {
		return RefusalOverview{}, err
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if out.Days, err = countBuckets(db, q.Cache, q.AttackReasons, day.AddDate(0, 0, -(q.Days-1)), q.Days, byDay, now); err != nil {
		return RefusalOverview{}, err
	}
	if err := out.countTops(db, q.TopSince.UTC(), now, q.Top); err != nil {
		return RefusalOverview{}, err
	}
	return out, nil
}

// countBuckets counts n consecutive buckets from start, each one period
// of g; the last one ends at now. The closed ones are taken from the cache
// where it has them; the others come from the hourly reason counters,
// read in one range from the first bucket not cached, and summed into
// their buckets here (bound times, no date function: portable). Refusals
// timed after now in the last bucket (a clock ahead of this one) are
// counted from the rows and taken out, as counting the rows would.
func countBuckets(db *gorm.DB, cache *OverviewCache, attack []string, start time.Time, n int, g granularity, now time.Time) ([]OverviewBucket, error) {
	out := make([]OverviewBucket, n)
	cached := make([]bool, n)
	first := n - 1
	for i, at := 0, start; i < n; i, at = i+1, g.next(at) {
		out[i] = OverviewBucket{Start: at, End: g.next(at)}
		if b, ok := cache.get(at, g.next(at), attack); ok && i < n-1 {
			out[i], cached[i] = b, true
		} else {
			first = min(first, i)
		}
	}
	index := make(map[int64]int, n-first)
	for i := first; i < n; i++ {
		if !cached[i] {
			index[out[i].Start.Unix()] = i
		}
	}
	// Each hour's counters come classed and summed, an hour a row (720
	// for 30 days, not one per reason and kind).
	if len(attack) == 0 {
		attack = []string{""} // no empty IN (); an attack reason is never ""
	}
	class := "COALESCE(SUM(CASE WHEN kind = ? THEN %[1]s ELSE 0 END), 0) AS network, COALESCE(SUM(CASE WHEN kind <> ? AND %[2]s IN ? THEN %[1]s ELSE 0 END), 0) AS attack, " +
		"COALESCE(SUM(%[1]s), 0) AS total"
	var hours []struct {
		Period                 time.Time
		Network, Attack, Total int64
	}
	end := out[n-1].End
	if err := db.Raw("SELECT period, "+fmt.Sprintf(class, "n", "value")+" FROM refusal_counts WHERE "+dimIs(reasonCounter.name)+" AND period >= ? AND period < ? GROUP BY period",
		KindNetwork, KindNetwork, attack, out[first].Start, end).Scan(&hours).Error; err != nil {
		return nil, fmt.Errorf("models: counting refusals from %s: %w", out[first].Start.Format(time.RFC3339), err)
	}
	for _, h := range hours {
		if i, ok := index[g.floor(h.Period).Unix()]; ok {
			out[i].Network += h.Network
			out[i].Attack += h.Attack
			out[i].Policy += h.Total - h.Network - h.Attack
		}
	}
	var late struct{ Network, Attack, Total int64 }
	if err := db.Raw("SELECT "+fmt.Sprintf(class, "repeat_count", "reason")+" FROM refusals WHERE time > ? AND time < ?", KindNetwork, KindNetwork, attack, now, end).
		Scan(&late).Error; err != nil {
		return nil, fmt.Errorf("models: counting refusals after %s: %w", now.Format(time.RFC3339), err)
	}
	last := &out[n-1]
	last.Network -= late.Network
	last.Attack -= late.Attack
	last.Policy -= late.Total - late.Network - late.Attack
	for i := first; i < n-1; i++ {
		if !cached[i] {
			cache.put(out[i], attack, now)
		}
	}
	return out, nil
}

// countTops fills the top lists and reasons for since until now from the
// counters (windowSums): hosts by day, the others by hour.
func (o *RefusalOverview) countTops(db *gorm.DB, since, now time.Time, top int) error {
	until := now.Add(time.Nanosecond)
	for _, l := range []struct {
		d   counterDim
		dst *[]NameCount
	}{{hostCounter, &o.TopHosts}, {agentCounter, &o.TopAgents}, {toolCounter, &o.TopTools}} {
		rows, err := topValues(db, l.d, since, until, top)
		if err != nil {
			return fmt.Errorf("models: top refused %ss: %w", l.d.name, err)
		}
		*l.dst = rows
	}
	sums, err := windowSums(db, reasonCounter, since, until)
	if err != nil {
		return fmt.Errorf("models: refusals by reason: %w", err)
	}
	o.Reasons = o.Reasons[:0]
	for k, n := range sums {
		if n > 0 {
			o.Reasons = append(o.Reasons, ReasonCount{Kind: k.Kind, Reason: k.Value, Count: n})
		}
	}
	slices.SortFunc(o.Reasons, func(a, b ReasonCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Reason, b.Reason))
	})
	return nil
}

// overviewFromCounters is migration 14: the counters gain the reason
// dimension by hour, filled from the rows already there, and the
// Overview, which reads them from now on, no longer needs its index on
// the rows (one index fewer to keep up per insert).
func overviewFromCounters(tx *gorm.DB, _ engine) error {
	// A database migrated again (version forgotten) has them already.
	if err := tx.Exec("DELETE FROM refusal_counts WHERE dim = ?", dimReason).Error; err != nil {
		return err
	}
	if err := fillCounters(tx, counterDims[4:], "SUM(repeat_count)", false); err != nil {
		return err
	}
	return tx.Exec("DROP INDEX IF EXISTS idx_refusals_overview").Error
}
