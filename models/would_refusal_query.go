package models

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// The refusal log's "would refuse" outcome: requests that were allowed but
// that report-only entries would have refused. A page takes the log's own
// RefusalQuery, so the page, the CSV and `console refusals --would-refuse`
// filter both outcomes with one parser; the filters that do not apply to
// a request that was allowed (a review status, the network kind) are an
// error rather than silently ignored.
//
// Every equality filter and the time range are answered from an index.
// A host substring or a free-text search cannot be, so, as in the refusal
// log (refusal_search.go), one page of them reads at most wouldScanRows
// rows, newest first, and its next cursor continues below the rows read.

// wouldScanRows is how many rows one page of a substring or text search
// reads at most (models/would_refusal_bench_test.go). A variable only so
// that tests can show a window's end on a small log.
var wouldScanRows int64 = 20_000

// checkWould refuses the filters that no would-be refusal can match.
func (q RefusalQuery) checkWould() error {
	switch {
	case q.Status != StatusUnreviewed || q.Unreviewed:
		return errors.New("models: would-be refusals have no review status; leave the review filter empty")
	case q.Kind != "" && q.Kind != KindPolicy:
		return fmt.Errorf("models: would-be refusals are all of kind %q; leave the kind filter empty", KindPolicy)
	case q.BeforeID < 0:
		return fmt.Errorf("models: cursor %d is negative; pass 0 for the newest page or a next value from a previous page", q.BeforeID)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return errors.New("models: time range is empty: until is not after since; swap or widen them")
	}
	return nil
}

// wouldWindowed reports whether a page of q reads a bounded window of
// rows: a host substring or a search that no indexed ticket narrows.
func (q RefusalQuery) wouldWindowed() bool {
	return q.Ticket == "" && (strings.TrimSpace(q.Search) != "" || (q.Host != "" && !q.HostExact))
}

// wouldFilter adds q's WHERE clauses for would_refusals.
func (q RefusalQuery) wouldFilter(db *gorm.DB) (*gorm.DB, error) {
	if q.BeforeID > 0 {
		db = db.Where("id < ?", q.BeforeID)
	}
	for _, f := range [...]struct{ col, v string }{{"code", q.Code}, {"reason", q.Reason}, {"tool", q.Tool}, {"agent", q.Agent}, {"ticket", q.Ticket}, {"integration", q.Integration}} {
		if f.v != "" {
			db = db.Where(f.col+" = ?", f.v)
		}
	}
	switch {
	case q.Host != "" && q.HostExact:
		db = db.Where("host = ?", q.Host)
	case q.Host != "":
		db = db.Where(hostContains, containsPattern(q.Host))
	}
	if !q.Since.IsZero() {
		db = db.Where("time >= ?", q.Since.UTC())
	}
	if !q.Until.IsZero() {
		db = db.Where("time < ?", q.Until.UTC())
	}
	words, err := SearchWords(q.Search)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	for _, w := range words {
		db = db.Where(`text LIKE ? ESCAPE '\'`, "%"+escapeLike(w)+"%")
	}
	return db, nil
}

// ListWouldRefusals returns one page of would-be refusals matching q,
// newest first, and the cursor of the next page (0 when this is the last).
func (s *Store) ListWouldRefusals(ctx context.Context, q RefusalQuery) ([]WouldRefusal, int64, error) {
	q = q.storableValues()
	limit, err := q.pageSize()
	if err != nil {
		return nil, 0, err
	}
	if err := q.checkWould(); err != nil {
		return nil, 0, err
	}
	db := s.r.WithContext(ctx)
	var low int64
	if q.wouldWindowed() {
		top := q.BeforeID
		if top == 0 {
			if err := db.Raw("SELECT COALESCE(MAX(id), 0) + 1 FROM would_refusals").Scan(&top).Error; err != nil {
				return nil, 0, fmt.Errorf("models: listing would-be refusals: %w", err)
			}
		}
		low = max(top-wouldScanRows, 0)
	}
	// Two steps, as ListRefusals: the page's IDs, which an index alone
	// often answers (a time range, an agent's time range), then its rows.
	page, err := q.wouldFilter(db.Table("would_refusals"))
	if err != nil {
		return nil, 0, err
	}
	if low > 0 {
		page = page.Where("id >= ?", low)
	}
	var ids []int64
	if err := page.Order("id DESC").Limit(limit+1).Pluck("id", &ids).Error; err != nil {
		return nil, 0, fmt.Errorf("models: listing would-be refusals: %w", err)
	}
	var next int64
	if len(ids) > limit {
		ids = ids[:limit]
		next = ids[limit-1]
	}
	var rows []WouldRefusal
	if len(ids) > 0 {
		if err := db.Where("id IN ?", ids).Order("id DESC").Find(&rows).Error; err != nil {
			return nil, 0, fmt.Errorf("models: reading would-be refusals: %w", err)
		}
	}
	if next != 0 {
		return rows, next, nil
	}
	if low == 0 {
		return rows, 0, nil
	}
	// The window ended before the page filled: go on below it, if any
	// older row is left.
	var older int64
	if err := db.Raw("SELECT COUNT(*) FROM (SELECT 1 FROM would_refusals WHERE id < ? LIMIT 1) AS o", low).Scan(&older).Error; err != nil {
		return nil, 0, fmt.Errorf("models: listing would-be refusals: %w", err)
	}
	if older == 0 {
		return rows, 0, nil
	}
	return rows, low, nil
}

// EachWouldRefusal calls fn for every would-be refusal matching q, newest
// first, in pages (a CSV export); ErrStopIteration stops it early.
func (s *Store) EachWouldRefusal(ctx context.Context, q RefusalQuery, fn func(*WouldRefusal) error) error {
	return eachPage(ctx, q, s.ListWouldRefusals, fn)
}
