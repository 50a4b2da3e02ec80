package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// SetAllowlistNote replaces the note of one row (by ID: the same entry
// text may be listed in several scopes, each with its own note), with the
// revision bump and audit records, in one transaction. A row that does
// not exist fails with a *NotFoundError naming its entry. It returns the
// new revision.
func (s *Store) SetAllowlistNote(ctx context.Context, expectRevision int64, row AllowlistEntry, note string, audit ...Audit) (int64, error) {
	return s.mutateConfig(ctx, SectionAllowlist, expectRevision, audit, func(tx *gorm.DB) error {
		res := tx.Model(&AllowlistEntry{}).Where("id = ?", row.ID).Update("note", note)
		if res.Error != nil {
			return fmt.Errorf("models: changing the note of allowlist entry %q: %w", row.Entry, res.Error)
		}
		if res.RowsAffected == 0 {
			return &NotFoundError{Kind: "allowlist entry", Value: row.Entry}
		}
		return nil
	})
}
