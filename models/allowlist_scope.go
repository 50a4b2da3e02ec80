package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// scopeSuffix names a scope in an error, after the entry.
func scopeSuffix(key string) string {
	if key == "" {
		return ""
	}
	return " (" + key + ")"
}

// RemoveAllowlistRows deletes the entries with the given IDs in one
// transaction with the revision bump: all or none. A missing ID is a
// *NotFoundError. It returns the new revision.
func (s *Store) RemoveAllowlistRows(ctx context.Context, expectRevision int64, rows []AllowlistEntry, audit ...Audit) (int64, error) {
	if len(rows) == 0 {
		return 0, fmt.Errorf("models: no allowlist entries to remove; pass at least one")
	}
	return s.mutateConfig(ctx, SectionAllowlist, expectRevision, audit, func(tx *gorm.DB) error {
		for _, r := range rows {
			res := tx.Where("id = ?", r.ID).Delete(&AllowlistEntry{})
			if res.Error != nil {
				return fmt.Errorf("models: removing allowlist entry %q: %w", r.Entry, res.Error)
			}
			if res.RowsAffected == 0 {
				return &NotFoundError{Kind: "allowlist entry", Value: r.Entry + scopeSuffix(r.ScopeKey)}
			}
		}
		return nil
	})
}

// EnforceAllowlistRows switches report-only entries to enforced in one
// transaction with the revision bump. An ID that is gone, or no longer
// report-only, is a *NotFoundError and nothing changes.
func (s *Store) EnforceAllowlistRows(ctx context.Context, expectRevision int64, rows []AllowlistEntry, audit ...Audit) (int64, error) {
	if len(rows) == 0 {
		return 0, fmt.Errorf("models: no allowlist entries to enforce; pass at least one")
	}
	return s.mutateConfig(ctx, SectionAllowlist, expectRevision, audit, func(tx *gorm.DB) error {
		for _, r := range rows {
			res := tx.Model(&AllowlistEntry{}).Where("id = ? AND report_only = ?", r.ID, true).Update("report_only", false)
			if res.Error != nil {
				return fmt.Errorf("models: enforcing allowlist entry %q: %w", r.Entry, res.Error)
			}
			if res.RowsAffected == 0 {
				return &NotFoundError{Kind: "report-only allowlist entry", Value: r.Entry + scopeSuffix(r.ScopeKey)}
			}
		}
		return nil
	})
}

// migrateAllowlistScopes drops the unique index on the entry alone, from
// before entries had scopes: uniqueness is (entry, scope_key) now, which
// AutoMigrate creates. Idempotent.
func migrateAllowlistScopes(db *gorm.DB) error {
	const old = "idx_allowlist_entries_entry"
	if db.Migrator().HasIndex(&AllowlistEntry{}, old) {
		if err := db.Migrator().DropIndex(&AllowlistEntry{}, old); err != nil {
			return fmt.Errorf("dropping the allowlist's old unique index: %w", err)
		}
	}
	return nil
}
