package models

import (
	"database/sql"
	"database/sql/driver"
	"strings"

	"gorm.io/gorm"
)

// How the refusal log's ID step is written for PostgreSQL, whose planner
// needs two hints SQLite does not (measured at ten million rows:
// models/refusal_pg_scale_bench_test.go).
//
// The planner estimates "WHERE … ORDER BY id DESC LIMIT 51" as if the
// matching rows were spread evenly over the IDs. For a window of time that
// ends in the past they are not: IDs follow time, so every row after the
// window comes first, and walking the primary key backwards read 745,000
// rows (4 s) to reach a one-day window a month back in a million-row log.
// Ordering such a window by "id + 0" takes the primary key's order away,
// so the (time, id) index reads the window alone and the page is sorted
// from it: its cost is the window's rows, not the log's.
//
// A host substring that matches a few refused hosts becomes "host IN (…)".
// There, too, the planner walked the primary key, through every newer row
// of other hosts (a flood's 2.6 million). Instead each host's newest rows
// are read from the (host, id) index, at most a page per host, and merged:
// a few thousand index entries whatever the log's size.

func isPostgres(db *gorm.DB) bool { return db.Dialector.Name() == "postgres" }

// idOrder is the ID step's ORDER BY.
//
// With a column filter, PostgreSQL is told which (column, id) index to
// walk: "code DESC, id DESC" is the order "id DESC" when code is fixed,
// and only that index has it. Left to choose, the planner walked the
// primary key (the same estimate, under its even-spread assumption) and,
// below a flood of 2.6 million rows of other codes and kinds, read all of
// them to find a page of "network, dns_failure": 4 s at ten million rows.
// The rarest column by nature leads; any fixed column gives the same rows.
//
// A Newer page (q.ascending) reads the same indexes forwards: the same
// estimate would walk the primary key up from its cursor through every
// row of other values (a ticket of the flooded day, from a cursor in the
// ninety days before it: 1.8 s at ten million rows).
func (q RefusalQuery) idOrder(db *gorm.DB) string {
	dir := q.direction()
	if !isPostgres(db) {
		return "id " + dir
	}
	if q.timeIndexed() {
		return "id + 0 " + dir
	}
	if col := q.pgDriver(); col != "" {
		return col + " " + dir + ", id " + dir
	}
	return "id " + dir
}

// direction is the ID step's SQL order: newest first, or oldest first
// for a Newer page.
func (q RefusalQuery) direction() string {
	if q.ascending {
		return "ASC"
	}
	return "DESC"
}

// timeIndexed reports whether a page of q is read through the (time, id)
// index: a window that ends, when the counters gave it no ID range
// (refusal_id_range.go). With a range, the primary key or a (column, id)
// index reads the window's IDs alone, newest first, and stops after a
// page.
func (q RefusalQuery) timeIndexed() bool {
	return !q.Until.IsZero() && !q.idRanged()
}

// idRanged reports whether the counters gave q's time filter an ID range.
func (q RefusalQuery) idRanged() bool { return q.idLow > 0 || q.idHigh > 0 }

// timeCondition is the condition "time op ?". Where the counters gave an
// ID range, PostgreSQL is kept from reading the time through its index:
// the ID range reads the window's rows by the primary key or a (column,
// id) index, newest first, and the time only filters them. Left to
// choose, the planner read a day's 82,000 rows through the (time, id)
// index to sort out a page of one code (0.45 s).
func (q RefusalQuery) timeCondition(db *gorm.DB, op string) string {
	if isPostgres(db) && q.idRanged() {
		return "(time " + op + " ?) IS TRUE"
	}
	return "time " + op + " ?"
}

// whereEquals adds the condition "col = v". On PostgreSQL the column that
// leads the page's order is written as a range of one value: the planner
// drops an ORDER BY column it knows to be constant (turning "code DESC,
// id DESC" back into "id DESC", the primary key), but not one bounded by
// a range. With a deterministic collation, PostgreSQL's only kind for a
// database, "BETWEEN v AND v" is exactly "= v".
//
// With an ID range from the counters (a time filter), the condition is
// "col = ANY('{v}')" instead: the planner does not take it for a
// constant either, so the order stays, and unlike a range of one value
// it is an equality to the index, so the ID range bounds the walk of the
// (col, id) index at both ends. With the range of one value, the IDs were
// checked entry by entry: "bad_port since the flood day" walked all
// 925,000 bad_port entries to find none (a row comparison on (col, id)
// stops a backward walk no sooner, in PostgreSQL 15).
func (q RefusalQuery) whereEquals(db *gorm.DB, col, v string) *gorm.DB {
	switch {
	case !isPostgres(db) || q.timeIndexed() || q.pgDriver() != col:
		return db.Where(col+" = ?", v)
	case q.idRanged():
		return db.Where(col+" = ANY(?::text[])", textArray{v})
	}
	return db.Where(col+" BETWEEN ? AND ?", v, v)
}

// pgDriver is the equality-filtered column whose (column, id) index a
// page of q walks on PostgreSQL, or "" for none.
func (q RefusalQuery) pgDriver() string {
	switch {
	case q.drive != "":
		return q.drive
	case q.Ticket != "":
		return "ticket"
	case q.Integration != "":
		return "integration"
	case q.Host != "" && q.HostExact:
		return "host"
	case q.Agent != "":
		return "agent"
	case q.Reason != "":
		return "reason"
	case q.Code != "":
		return "code"
	case q.Tool != "":
		return "tool"
	case q.Kind != "":
		return "kind"
	case q.Unreviewed || q.Status != StatusUnreviewed:
		return "status"
	}
	return ""
}

// perHostIDs is the ID step of a query narrowed to the hosts in q.hostIn,
// on PostgreSQL: the newest n rows of each host through the (host, id)
// index, then the newest n of those (the oldest, for a Newer page's
// ascending step). Conditions already on db (an ID
// window) apply to each host's rows.
func (q RefusalQuery) perHostIDs(db *gorm.DB, n int) ([]int64, error) {
	hosts := q.hostIn
	q.hostIn, q.Host, q.HostExact = nil, "", false
	q.drive = "host" // each host's rows, through (host, id)
	each, err := q.idQuery(db.Where("host = h.host"), n, "")
	if err != nil {
		return nil, err
	}
	var ids []int64
	err = db.Session(&gorm.Session{NewDB: true}).
		Raw("SELECT x.id FROM unnest(?::text[]) AS h(host) CROSS JOIN LATERAL (?) AS x ORDER BY x.id "+q.direction()+" LIMIT ?", textArray(hosts), each.Select("id"), n).
		Scan(&ids).Error
	return ids, err
}

// textArray is a PostgreSQL text[] parameter. (A []string would be
// expanded by GORM into a list of parameters, which is what IN wants and
// unnest does not.)
type textArray []string

// Value writes the array literal: each element quoted, with its quotes
// and backslashes escaped.
func (a textArray) Value() (driver.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}

// serialOnPostgres runs fn in a read-only transaction (no write lock:
// lockingPool) that asks PostgreSQL for no parallel workers. A search
// reads a window of rows (refusal_search.go) and, when the planner
// expects few matches, it split the walk among workers: on a busy
// server gathering them made the page three to four times slower (a
// rare URL: 450 ms against 100-170 ms serially, at ten million rows).
// Nor does it compile the statements (JIT): a bitmap scan of a window is
// costed high enough to be compiled, which took 40 ms of a 100 ms page
// to save nothing. On SQLite fn runs as it is.
func serialOnPostgres(db *gorm.DB, fn func(*gorm.DB) error) error {
	if !isPostgres(db) {
		return fn(db)
	}
	return db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL jit = off").Error; err != nil {
			return err
		}
		return fn(tx)
	}, &sql.TxOptions{ReadOnly: true})
}
