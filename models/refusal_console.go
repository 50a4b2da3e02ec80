package models

import (
	"context"
	"fmt"
	"slices"
)

// This file holds the queries only the console's refusal log needs: paging
// back towards newer rows, and the values its filter menus offer.

// ListRefusalsAfter returns the page of refusals matching q that comes just
// above afterID, the "Newer" direction of the keyset: the limit rows with the
// smallest IDs greater than afterID, shown newest first like every page.
// newer reports whether still newer matching rows exist. q.BeforeID must be 0.
func (s *Store) ListRefusalsAfter(ctx context.Context, q RefusalQuery, afterID int64) (rows []Refusal, newer bool, err error) {
	q = q.storableValues()
	if afterID < 0 {
		return nil, false, fmt.Errorf("models: cursor %d is negative; pass an ID from a page of the log", afterID)
	}
	if q.BeforeID != 0 {
		return nil, false, fmt.Errorf("models: refusal query has both a before cursor (%d) and an after cursor (%d); use one", q.BeforeID, afterID)
	}
	limit, err := q.pageSize()
	if err != nil {
		return nil, false, err
	}
	db := s.r.WithContext(ctx)
	q.memo, q.lookup = &s.searches, &wordLookup{}
	// The ID step of the Older direction, read forwards from the cursor:
	// the same time bounds (boundIDs), hosts (resolveHosts) and, on
	// PostgreSQL, the same indexes (idOrder), so a Newer page costs what
	// an Older one does. One extra ID says whether more lie above.
	q, none, err := q.boundIDs(db)
	if err != nil || none {
		return nil, false, err
	}
	q, none, err = q.resolveHosts(db)
	if err != nil || none {
		return nil, false, err
	}
	// A search reads at most one window of rows per page, as ListRefusals
	// does: newer rows beyond it are another page.
	if window := s.NewerWindow(q); window > 0 {
		top := afterID + window
		if q.idHigh == 0 || q.idHigh > top {
			q.idHigh = top
			var beyond int64
			if err := db.Raw("SELECT COUNT(*) FROM (SELECT 1 FROM refusals WHERE id > ? LIMIT 1) AS n", top).Scan(&beyond).Error; err != nil {
				return nil, false, fmt.Errorf("models: listing refusals after %d: %w", afterID, err)
			}
			newer = beyond > 0
		}
	}
	q.idLow = max(q.idLow, afterID+1)
	q.ascending = true
	var ids []int64
	if q.hostIn == nil && q.onlyHostSubstring() && isPostgres(db) {
		ids, err = q.newerManyHostIDs(db, limit+1) // refusal_host_probe_pg.go
	} else {
		ids, err = q.selectIDs(db, limit+1, "")
	}
	if err != nil {
		return nil, false, fmt.Errorf("models: listing refusals after %d: %w", afterID, err)
	}
	if len(ids) > limit {
		ids, newer = ids[:limit], true
	}
	if len(ids) == 0 {
		return nil, newer, nil
	}
	if err := db.Where("id IN ?", ids).Order("id DESC").Find(&rows).Error; err != nil {
		return nil, false, fmt.Errorf("models: reading refusal page after %d: %w", afterID, err)
	}
	return rows, newer, nil
}

// NewerWindow is how many rows above its cursor a Newer page of q reads
// at most (ListRefusalsAfter), 0 when it reads every row: a search reads
// a window, so a Newer page may come back empty with newer rows beyond
// it, and the page after it starts at the cursor plus the window.
func (s *Store) NewerWindow(q RefusalQuery) int64 {
	if !q.windowed() {
		return 0
	}
	return scanRows(s.r)
}

// RefusalFacets are the distinct values the log's filter menus offer.
type RefusalFacets struct {
	Tools   []string
	Agents  []string
	Codes   []string
	Reasons []string
	// Integrations are the integrations whose calls were refused.
	Integrations []string
}

// MaxFacetValues bounds each list of RefusalFacets. A menu longer than this
// is no use to anyone; the filter still accepts any value typed in the URL.
const MaxFacetValues = 200

// facetColumns are the columns RefusalFacets may read. They are spliced into
// SQL, so the list is closed.
var facetColumns = []string{"tool", "agent", "code", "reason", "integration"}

// RefusalValues returns the refusal log's distinct tools, agents, codes,
// reasons and integrations in ascending order, at most MaxFacetValues
// each, empty values left out.
func (s *Store) RefusalValues(ctx context.Context) (RefusalFacets, error) {
	return s.facets(ctx, "refusals", facetColumns)
}

// facets fills RefusalFacets from table's cols, one skip scan each (on
// PostgreSQL, all in one statement: skipScansDown).
func (s *Store) facets(ctx context.Context, table string, cols []string) (RefusalFacets, error) {
	var down map[string][]string
	if s.engine == enginePostgres {
		var err error
		if down, err = s.skipScansDown(ctx, table, cols); err != nil {
			return RefusalFacets{}, err
		}
	}
	var f RefusalFacets
	for _, col := range cols {
		vals, ok := down[col]
		if !ok {
			var err error
			if vals, err = s.skipScanUp(ctx, table, col); err != nil {
				return RefusalFacets{}, err
			}
		}
		switch col {
		case "tool":
			f.Tools = vals
		case "agent":
			f.Agents = vals
		case "code":
			f.Codes = vals
		case "reason":
			f.Reasons = vals
		case "integration":
			f.Integrations = vals
		}
	}
	return f, nil
}

// distinctValues lists col's distinct non-empty values with a skip scan: each
// step seeks the column's index for the next larger value. SELECT DISTINCT
// would read every index entry (a million for a full log); this reads one
// per distinct value.
func (s *Store) distinctValues(ctx context.Context, col string) ([]string, error) {
	if !slices.Contains(facetColumns, col) {
		return nil, fmt.Errorf("models: %q is not a refusal column with values to list; use one of %v", col, facetColumns)
	}
	return s.skipScan(ctx, "refusals", col)
}

// wouldFacetColumns are the would_refusals columns WouldRefusalValues
// reads: each leads an index, which the skip scan needs.
var wouldFacetColumns = []string{"tool", "agent", "integration"}

// WouldRefusalValues returns the would-be refusals' distinct tools,
// agents and integrations, as RefusalValues does for refusals: the
// would-refuse view's menus.
func (s *Store) WouldRefusalValues(ctx context.Context) (RefusalFacets, error) {
	return s.facets(ctx, "would_refusals", wouldFacetColumns)
}

// skipScan lists the distinct non-empty values of table.col, at most
// MaxFacetValues, one index seek each. Both names come from the closed
// lists above, never from a caller.
func (s *Store) skipScan(ctx context.Context, table, col string) ([]string, error) {
	if s.engine == enginePostgres {
		down, err := s.skipScansDown(ctx, table, []string{col})
		if vals, complete := down[col]; err != nil || complete {
			return vals, err
		}
	}
	return s.skipScanUp(ctx, table, col)
}

// skipScanUp is skipScan upwards: MIN(col) WHERE col > x, from the
// smallest value.
//
// Each step also says that col is not empty, which v.x already implies:
// PostgreSQL cannot prove that from a value of the query's own, and
// without it a partial index (refusal_pg_partial.go) is no use to the
// step.
func (s *Store) skipScanUp(ctx context.Context, table, col string) ([]string, error) {
	var out []string
	if err := s.r.WithContext(ctx).Raw(skipScanUpQuery(table, col), MaxFacetValues).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("models: listing distinct %s %ss: %w", table, col, err)
	}
	// PostgreSQL walks the index in the column's collation: the smallest
	// values there, in bytewise order as SQLite gives them. (Which values
	// they are can differ from SQLite's past MaxFacetValues: only a
	// column of more values than skipScanDownSteps comes this way.)
	slices.Sort(out)
	return out, nil
}

// skipScanUpQuery is skipScanUp's statement; table and col come from
// closed lists, never from input.
func skipScanUpQuery(table, col string) string {
	return `WITH RECURSIVE v(x) AS (
		SELECT MIN(` + col + `) FROM ` + table + ` WHERE ` + col + ` > ''
		UNION ALL
		SELECT (` + skipScanUpStep(table, col, "v.x") + `) FROM v WHERE v.x IS NOT NULL
	) SELECT x FROM v WHERE x IS NOT NULL LIMIT ?`
}

// skipScanUpStep is one step of skipScanUpQuery: the next value of col
// above after.
func skipScanUpStep(table, col, after string) string {
	return `SELECT MIN(` + col + `) FROM ` + table + ` WHERE ` + col + ` > ` + after + ` AND ` + col + ` > ''`
}
