package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// AuditQuery selects audit records; a zero field does not filter.
type AuditQuery struct {
	Actor  string // exactly this actor
	Action string // exactly this action, e.g. allowlist.remove
	// Since is inclusive, Until exclusive.
	Since, Until time.Time
	// BeforeID pages: records older than this ID (0: from the newest).
	BeforeID int64
	Limit    int
}

// ListAuditWhere returns up to q.Limit records that match q, newest first,
// and the cursor of the next page (0 when there is none).
func (s *Store) ListAuditWhere(ctx context.Context, q AuditQuery) ([]Audit, int64, error) {
	limit := q.Limit
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	db := s.r.WithContext(ctx).Order("id DESC").Limit(limit + 1)
	if q.BeforeID > 0 {
		db = db.Where("id < ?", q.BeforeID)
	}
	if q.Actor != "" {
		db = db.Where("actor = ?", q.Actor)
	}
	if q.Action != "" {
		db = db.Where("action = ?", q.Action)
	}
	if !q.Since.IsZero() {
		// clause quotes the column for each dialect: time is a keyword.
		db = db.Where(clause.Gte{Column: clause.Column{Name: "time"}, Value: q.Since.UTC()})
	}
	if !q.Until.IsZero() {
		db = db.Where(clause.Lt{Column: clause.Column{Name: "time"}, Value: q.Until.UTC()})
	}
	var out []Audit
	if err := db.Find(&out).Error; err != nil {
		return nil, 0, fmt.Errorf("models: listing audit records: %w", err)
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// AuditFacets are the actors and actions the audit trail holds, sorted,
// for the filter menus.
func (s *Store) AuditFacets(ctx context.Context) (actors, actions []string, err error) {
	db := s.r.WithContext(ctx).Model(&Audit{})
	if err := db.Distinct().Order("actor").Pluck("actor", &actors).Error; err != nil {
		return nil, nil, fmt.Errorf("models: listing audit actors: %w", err)
	}
	if err := s.r.WithContext(ctx).Model(&Audit{}).Distinct().Order("action").Pluck("action", &actions).Error; err != nil {
		return nil, nil, fmt.Errorf("models: listing audit actions: %w", err)
	}
	return actors, actions, nil
}
