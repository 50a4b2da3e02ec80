package models

import (
	"context"
	"fmt"
	"slices"
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
// purge has not reached. The values come out in the database's order,
// reversed, so the menus are what the upward scan gives; a column with
// more distinct values than skipScanDownSteps takes the upward scan.

// skipScanDownSteps bounds the downward scan: it must read every value
// to know the smallest MaxFacetValues.
const skipScanDownSteps = 4 * MaxFacetValues

// skipScanDown lists table.col's distinct non-empty values, ascending,
// at most MaxFacetValues, by a downward skip scan; complete is false when
// the column has more than skipScanDownSteps values.
func (s *Store) skipScanDown(ctx context.Context, table, col string) (vals []string, complete bool, err error) {
	query := `WITH RECURSIVE v(x) AS (
		SELECT MAX(` + col + `) FROM ` + table + ` WHERE ` + col + ` > ''
		UNION ALL
		SELECT (SELECT MAX(` + col + `) FROM ` + table + ` WHERE ` + col + ` < v.x AND ` + col + ` > '') FROM v WHERE v.x IS NOT NULL
	) SELECT x FROM v WHERE x IS NOT NULL LIMIT ?`
	if err := s.r.WithContext(ctx).Raw(query, skipScanDownSteps+1).Scan(&vals).Error; err != nil {
		return nil, false, fmt.Errorf("models: listing distinct %s %ss: %w", table, col, err)
	}
	if len(vals) > skipScanDownSteps {
		return nil, false, nil
	}
	slices.Reverse(vals)
	return vals[:min(len(vals), MaxFacetValues)], true, nil
}
