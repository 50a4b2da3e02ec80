package models

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// The filter menus' skip scan on PostgreSQL walks the (column, id)
// indexes downwards. A retention purge deletes the oldest rows, whose
// entries sit at the low end of each value's run in those indexes, and
// PostgreSQL keeps a deleted row's index entries until VACUUM: the upward
// scan (MIN(col) WHERE col > x) landed on them for every value, and
// checked each against the table before it found a live row. Halfway
// through purging a third of a ten-million-row log, that made the log
// page's menus take over a second (BenchmarkPGScalePurge). Downwards,
// MAX(col) WHERE col < x lands on each value's newest row, which the
// purge has not reached. A column with more distinct values than
// skipScanDownSteps takes the upward scan.
//
// The menus are ordered byte by byte, as SQLite's are, and hold the
// bytewise smallest MaxFacetValues values: the scan walks the index in
// the column's collation (en_US.UTF-8 puts "alice" before "Zed") and
// the complete list is sorted here. Written with COLLATE "C" instead,
// MAX(col COLLATE "C") cannot use the (col, id) index, which is in the
// column's collation (even on a C.UTF-8 database: a different
// collation), and every step became a sequential scan of the table
// (EXPLAIN on a 20,000-row table: Seq Scan instead of Index Only Scan
// Backward).

// skipScanDownSteps bounds the downward scan: it must read every value
// to know the smallest MaxFacetValues.
const skipScanDownSteps = 4 * MaxFacetValues

// skipScansDown runs the downward skip scan of every column of cols in
// one statement and returns the lists of the columns it read completely
// (the others take skipScan). The log page reads its five menus on every
// load: one round trip instead of five, which on a server busy taking a
// flood's rows is most of what the menus cost (each query waits for its
// backend to be scheduled).
func (s *Store) skipScansDown(ctx context.Context, table string, cols []string) (map[string][]string, error) {
	// The statement has no parameters, the LIMIT written in: a statement
	// without parameters is planned once per connection and its plan
	// kept (plan_cache_mode, store_postgres.go, forces a fresh plan only
	// where there are parameters), and planning these five recursive
	// queries took PostgreSQL 9 ms on every load of the log page, more
	// than running them.
	parts := make([]string, len(cols))
	for i, col := range cols {
		// table and col come from closed lists (facetColumns,
		// wouldFacetColumns), never from input.
		// step numbers the values in the scan's (descending) order,
		// which the final ORDER BY turns round.
		parts[i] = fmt.Sprintf(`(WITH RECURSIVE v(x, step) AS (
			SELECT MAX(%[1]s), 0 FROM %[2]s WHERE %[1]s > ''
			UNION ALL
			SELECT (SELECT MAX(%[1]s) FROM %[2]s WHERE %[1]s < v.x AND %[1]s > ''), v.step + 1 FROM v WHERE v.x IS NOT NULL
		) SELECT %[3]d AS col, step, x FROM v WHERE x IS NOT NULL LIMIT %[4]d)`, col, table, i, skipScanDownSteps+1)
	}
	var rows []struct {
		Col int
		X   string
	}
	query := strings.Join(parts, " UNION ALL ") + " ORDER BY col, step DESC"
	if err := s.r.WithContext(ctx).Raw(query).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("models: listing the distinct values of %s: %w", table, err)
	}
	got := make([][]string, len(cols))
	for _, r := range rows {
		got[r.Col] = append(got[r.Col], r.X)
	}
	out := make(map[string][]string, len(cols))
	for i, vals := range got {
		if len(vals) > skipScanDownSteps {
			continue // incomplete: skipScan takes the upward scan
		}
		slices.Sort(vals) // bytewise, as SQLite orders them
		out[cols[i]] = vals[:min(len(vals), MaxFacetValues)]
	}
	return out, nil
}
