package models

import (
	"fmt"

	"gorm.io/gorm"
)

// hostDayRanges is migration 21: each day's host counter bounds the IDs of
// that host's rows of that day, as the hours' totals do since migration
// 15, so a broad host substring finds its page from a few hosts
// (refusal_host_days_pg.go). The writers widen the range in each insert's
// transaction from now on; the rows already there are counted again, once,
// with their ranges (seconds for millions of rows). A replica of an older
// release must be stopped first: it would add to a host's counter without
// widening its range, and a range that misses a row hides that row from
// those pages.
//
// Hosts stored before they were lower-cased (storedHost) are lower-cased
// first, in the log and the refused-host list, so that every counter's
// value is lower-case: the counters are matched with a plain LIKE, 2.5
// times faster than through LOWER() (a day's 10,000 hosts, read to skip
// it), and an exact host filter finds those rows too. (SQLite's LOWER
// folds ASCII only, as it always has.)
//
// On PostgreSQL the host counters also get a trigram index of their own
// (idx_refusal_counts_host_trgm, partial: the host rows only), so a page
// of a substring far from its cursor finds the first day naming one of
// its hosts without reading every day's hosts between (refusal_host_days_pg.go:
// 50 ms for the 45 days below the flood's 20,000 hosts, 5 ms through the
// index). It is built once (4 s, 28 MB at ten million refusals) and
// touched only by a host's first refusal of a day: adding to a counter
// changes no indexed column. Without pg_trgm the pages read those days.
func hostDayRanges(tx *gorm.DB, e engine) error {
	for _, stmt := range []string{
		"UPDATE refusals SET host = LOWER(host) WHERE host <> LOWER(host)",
		"INSERT INTO refusal_hosts (host) SELECT LOWER(host) FROM refusal_hosts WHERE host <> LOWER(host) ON CONFLICT DO NOTHING",
		"DELETE FROM refusal_hosts WHERE host <> LOWER(host)",
		"DELETE FROM refusal_counts WHERE dim = '" + dimHost + "'",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	if err := fillCounters(tx, []counterDim{hostCounter}, "SUM(repeat_count)", true); err != nil {
		return err
	}
	if e != enginePostgres {
		return nil
	}
	schema, err := trigramSchema(tx)
	if err != nil || schema == "" {
		return err
	}
	return tx.Exec("CREATE INDEX IF NOT EXISTS " + hostCountersTrigramIndex + " ON refusal_counts USING gin (value " + schema + ".gin_trgm_ops) WHERE dim = '" + dimHost + "'").Error
}

// hostCountersTrigramIndex is the host counters' trigram index.
const hostCountersTrigramIndex = "idx_refusal_counts_host_trgm"
