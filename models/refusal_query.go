package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Page sizes for ListRefusals.
const (
	DefaultRefusalPage = 50
	MaxRefusalPage     = 500
)

// RefusalQuery selects a page of refusals, newest first. Zero-valued fields
// do not filter.
type RefusalQuery struct {
	// BeforeID is the keyset cursor: only rows with a smaller ID are
	// returned. Pass the next value from the previous page; 0 starts at the
	// newest row.
	BeforeID int64
	// Limit is the page size: 0 means DefaultRefusalPage, at most
	// MaxRefusalPage.
	Limit int

	Code   string
	Reason string
	Tool   string
	Agent  string
	// Host matches as a substring (case-insensitive for ASCII) unless
	// HostExact is set.
	Host      string
	HostExact bool
	// Status filters on a review status. StatusUnreviewed cannot be told
	// apart from "no filter", so Unreviewed asks for those rows instead.
	Status     ReviewStatus
	Unreviewed bool
	// Since is inclusive, Until exclusive.
	Since time.Time
	Until time.Time
}

func (q RefusalQuery) pageSize() (int, error) {
	switch {
	case q.Limit == 0:
		return DefaultRefusalPage, nil
	case q.Limit < 0 || q.Limit > MaxRefusalPage:
		return 0, fmt.Errorf("models: page size %d is out of range; use 1 to %d (0 means %d)", q.Limit, MaxRefusalPage, DefaultRefusalPage)
	}
	return q.Limit, nil
}

// filter adds the WHERE clauses for q (everything except the page size).
func (q RefusalQuery) filter(db *gorm.DB) (*gorm.DB, error) {
	if q.BeforeID < 0 {
		return nil, fmt.Errorf("models: cursor %d is negative; pass 0 for the newest page or a next value from a previous page", q.BeforeID)
	}
	if err := q.Status.check(); err != nil {
		return nil, err
	}
	if q.Unreviewed && q.Status != StatusUnreviewed {
		return nil, fmt.Errorf("models: refusal query asks for status %q and for unreviewed rows; choose one", q.Status)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return nil, fmt.Errorf("models: time range is empty: until %s is not after since %s; swap or widen them",
			q.Until.UTC().Format(time.RFC3339), q.Since.UTC().Format(time.RFC3339))
	}
	if q.BeforeID > 0 {
		db = db.Where("id < ?", q.BeforeID)
	}
	// A fixed order keeps the generated SQL identical for identical filters.
	for _, f := range [...]struct{ col, v string }{{"code", q.Code}, {"reason", q.Reason}, {"tool", q.Tool}, {"agent", q.Agent}} {
		if f.v != "" {
			db = db.Where(f.col+" = ?", f.v)
		}
	}
	switch {
	case q.Host != "" && q.HostExact:
		db = db.Where("host = ?", q.Host)
	case q.Host != "":
		db = db.Where(`host LIKE ? ESCAPE '\'`, "%"+escapeLike(q.Host)+"%")
	}
	switch {
	case q.Unreviewed:
		db = db.Where("status = ''")
	case q.Status != StatusUnreviewed:
		db = db.Where("status = ?", q.Status)
	}
	if !q.Since.IsZero() {
		db = db.Where("time >= ?", q.Since.UTC())
	}
	if !q.Until.IsZero() {
		db = db.Where("time < ?", q.Until.UTC())
	}
	return db, nil
}

// page builds the page query for q and returns the page size. It fetches
// one row more than the page: that row tells us whether another page exists
// without a COUNT over a million rows.
func (q RefusalQuery) page(db *gorm.DB) (*gorm.DB, int, error) {
	limit, err := q.pageSize()
	if err != nil {
		return nil, 0, err
	}
	db, err = q.filter(db.Model(&Refusal{}))
	if err != nil {
		return nil, 0, err
	}
	return db.Order("id DESC").Limit(limit + 1), limit, nil
}

// escapeLike makes s match literally inside a LIKE pattern using '\' as the
// escape character, so a host filter of "a_b" does not match "axb".
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ListRefusals returns one page of refusals matching q, newest first, and
// the cursor for the next page (0 when this is the last page).
func (s *Store) ListRefusals(ctx context.Context, q RefusalQuery) ([]Refusal, int64, error) {
	db, limit, err := q.page(s.r.WithContext(ctx))
	if err != nil {
		return nil, 0, err
	}
	var rows []Refusal
	if err := db.Find(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("models: listing refusals: %w", err)
	}
	if len(rows) <= limit {
		return rows, 0, nil
	}
	rows = rows[:limit]
	return rows, rows[limit-1].ID, nil
}

// ErrStopIteration may be returned by an EachRefusal callback to stop early;
// EachRefusal then returns nil.
var ErrStopIteration = errors.New("models: stop iteration")

// EachRefusal calls fn for every refusal matching q, newest first, starting
// below q.BeforeID. q.Limit is ignored. Rows are read in pages of
// MaxRefusalPage through short separate queries, so a CSV export of a
// million rows neither holds them all in memory nor keeps one read
// transaction open for the whole download. Rows inserted after the call
// starts are not visited (they have higher IDs).
func (s *Store) EachRefusal(ctx context.Context, q RefusalQuery, fn func(*Refusal) error) error {
	q.Limit = MaxRefusalPage
	for {
		rows, next, err := s.ListRefusals(ctx, q)
		if err != nil {
			return err
		}
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				if errors.Is(err, ErrStopIteration) {
					return nil
				}
				return err
			}
		}
		if next == 0 {
			return nil
		}
		q.BeforeID = next
	}
}

// CountRefusalsSince counts refusals with Time at or after since.
func (s *Store) CountRefusalsSince(ctx context.Context, since time.Time) (int64, error) {
	var n int64
	if err := s.r.WithContext(ctx).Model(&Refusal{}).Where("time >= ?", since.UTC()).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("models: counting refusals since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	return n, nil
}

// HostCount is one row of TopRefusedHosts.
type HostCount struct {
	Host  string
	Count int64
}

// TopRefusedHosts returns the n hosts refused most often since the given
// time, most refused first (ties by host name).
func (s *Store) TopRefusedHosts(ctx context.Context, since time.Time, n int) ([]HostCount, error) {
	if n < 1 || n > MaxRefusalPage {
		return nil, fmt.Errorf("models: top hosts count %d is out of range; use 1 to %d", n, MaxRefusalPage)
	}
	var out []HostCount
	err := s.r.WithContext(ctx).Model(&Refusal{}).
		Select("host, COUNT(*) AS count").
		Where("time >= ?", since.UTC()).
		Group("host").Order("count DESC, host").Limit(n).
		Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("models: top refused hosts since %s: %w", since.UTC().Format(time.RFC3339), err)
	}
	return out, nil
}
