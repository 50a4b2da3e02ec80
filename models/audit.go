package models

import (
	"context"
	"time"
)

// Audit is one change to the configuration: who did what to which thing,
// and the value before and after. Secrets never reach it; the caller
// writes "(secret)" in their place.
type Audit struct {
	ID     int64     `gorm:"primaryKey"`
	Time   time.Time `gorm:"not null;index"`
	Actor  string    `gorm:"not null"`
	Action string    `gorm:"not null;index"` // e.g. allowlist.add, settings.set, user.role, token.revoke
	Target string    `gorm:"not null;default:''"`
	Before string    `gorm:"not null;default:''"`
	After  string    `gorm:"not null;default:''"`
}

// RecordAudit appends records, stamping a zero Time with now.
func (s *Store) RecordAudit(ctx context.Context, records ...Audit) error {
	if len(records) == 0 {
		return nil
	}
	now := time.Now().UTC()
	for i := range records {
		records[i].ID = 0
		if records[i].Time.IsZero() {
			records[i].Time = now
		}
	}
	return s.w.WithContext(ctx).Create(&records).Error
}

// ListAudit returns up to limit records older than beforeID (0: newest),
// newest first, and the cursor of the next page (0 when there is none).
func (s *Store) ListAudit(ctx context.Context, beforeID int64, limit int) ([]Audit, int64, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	q := s.r.WithContext(ctx).Order("id DESC").Limit(limit + 1)
	if beforeID > 0 {
		q = q.Where("id < ?", beforeID)
	}
	var out []Audit
	if err := q.Find(&out).Error; err != nil {
		return nil, 0, err
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}
