package models

import "gorm.io/gorm"

// countersFillfactor is migration 17: on PostgreSQL the refusal counters'
// pages keep half their room free, so that adding to a counter is a HOT
// update (heap-only tuple: the new version on the same page, no new index
// entries, the old one pruned when the page is next read).
//
// Every batch the log writers store adds to hundreds of counters (one a
// refused host a day, and the hour's totals, tools, agents and reasons).
// PostgreSQL writes each addition as a new row version. On full pages,
// the default, about half of them could not stay on their page: each such
// update added entries to both of the table's indexes and left a dead
// version behind for autovacuum, and today's top hosts, read on every
// load of the refusal log, walked those dead versions. Measured with
// 100,000 refusals over 5,000 hosts (BenchmarkInsertRefusals' shape): HOT
// updates 52% -> 99%, dead versions left 49,000 -> 4,900, the server's
// CPU a refusal about 8 µs less. The counters are a small table (a row a
// host a day, and a few a dimension an hour), so the room costs little.
//
// It changes how new pages are filled; pages already full stay so until
// their rows move. SQLite updates in place and has no such setting.
func countersFillfactor(tx *gorm.DB, e engine) error {
	if e != enginePostgres {
		return nil
	}
	return tx.Exec("ALTER TABLE refusal_counts SET (fillfactor = 50)").Error
}
