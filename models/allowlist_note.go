package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// SetAllowlistNote replaces the note of one entry, with the revision bump
// and audit records, in one transaction. An entry that does not exist
// fails with a *NotFoundError naming it. It returns the new revision.
func (s *Store) SetAllowlistNote(ctx context.Context, expectRevision int64, entry, note string, audit ...Audit) (int64, error) {
	return s.mutateConfig(ctx, SectionAllowlist, expectRevision, audit, func(tx *gorm.DB) error {
		res := tx.Model(&AllowlistEntry{}).Where("entry = ?", entry).Update("note", note)
		if res.Error != nil {
			return fmt.Errorf("models: changing the note of allowlist entry %q: %w", entry, res.Error)
		}
		if res.RowsAffected == 0 {
			return &NotFoundError{Kind: "allowlist entry", Value: entry}
		}
		return nil
	})
}
