package models

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
)

// ReviewRefusals gives every refusal in ids the same review, and writes
// the audit records, in one transaction: if any refusal does not exist,
// a *NotFoundError names it and nothing is saved.
func (s *Store) ReviewRefusals(ctx context.Context, ids []int64, status ReviewStatus, comment, by string, audit ...Audit) error {
	if err := status.check(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return fmt.Errorf("models: no refusals to review; pass at least one ID")
	}
	updates := map[string]any{"status": status, "comment": comment, "reviewed_by": by, "reviewed_at": time.Now().UTC()}
	if status == StatusUnreviewed {
		updates["reviewed_by"] = ""
		updates["reviewed_at"] = nil
	}
	return s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, id := range ids {
			res := tx.Model(&Refusal{}).Where("id = ?", id).Updates(updates)
			if res.Error != nil {
				return fmt.Errorf("models: reviewing refusal %d: %w", id, res.Error)
			}
			if res.RowsAffected == 0 {
				return &NotFoundError{Kind: "refusal", Value: strconv.FormatInt(id, 10)}
			}
		}
		return writeAudit(tx, audit)
	})
}
