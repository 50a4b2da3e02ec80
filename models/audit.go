package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
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

// RecordAudit appends records on their own, stamping a zero Time with now.
// A change to the configuration passes its records to the mutation instead,
// which writes them in the change's own transaction: a change is never
// committed without its record, nor recorded without being committed.
func (s *Store) RecordAudit(ctx context.Context, records ...Audit) error {
	return writeAudit(s.w.WithContext(ctx), records)
}

// writeAudit inserts records with tx, inside the caller's transaction.
func writeAudit(tx *gorm.DB, records []Audit) error {
	if len(records) == 0 {
		return nil
	}
	now := time.Now().UTC()
	rows := make([]Audit, len(records))
	for i, r := range records {
		r.ID = 0
		if r.Time.IsZero() {
			r.Time = now
		}
		r.Time = r.Time.UTC()
		rows[i] = r
	}
	// In batches: one INSERT of a 10,000-line allowlist paste's records
	// would pass SQLite's limit on bound variables.
	if err := tx.CreateInBatches(&rows, 500).Error; err != nil {
		return fmt.Errorf("models: recording %d audit records: %w", len(rows), err)
	}
	return nil
}

// ListAudit returns up to limit records older than beforeID (0: newest),
// newest first, and the cursor of the next page (0 when there is none).
func (s *Store) ListAudit(ctx context.Context, beforeID int64, limit int) ([]Audit, int64, error) {
	return s.ListAuditWhere(ctx, AuditQuery{BeforeID: beforeID, Limit: limit})
}
