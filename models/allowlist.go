package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// AllowlistEntry is one destination admins allowed through the guard. Entry
// is already normalised by the guard (e.g. "status.example.com",
// "*.docs.example.com", "intranet.corp:8080", "[fd00::5]:8443"); this package
// only stores it and keeps it unique within its scope.
//
// Agents and Tools scope the entry (empty: every agent, every tool);
// ScopeKey is the scope's canonical text (guard.Scope.Key, "" for the
// default scope), so (Entry, ScopeKey) is what stays unique. Internal
// marks an internal host, which widens its scope without narrowing it;
// ReportOnly an entry that is tried, not enforced.
type AllowlistEntry struct {
	ID         int64      `gorm:"primaryKey"`
	Entry      string     `gorm:"not null;uniqueIndex:idx_allowlist_entry_scope,priority:1"`
	ScopeKey   string     `gorm:"not null;default:'';uniqueIndex:idx_allowlist_entry_scope,priority:2"`
	Agents     StringList `gorm:"type:text;not null;default:''"`
	Tools      StringList `gorm:"type:text;not null;default:''"`
	Internal   bool       `gorm:"not null;default:false"`
	ReportOnly bool       `gorm:"not null;default:false"`
	Note       string     `gorm:"not null;default:''"`
	AddedBy    string     `gorm:"not null;default:''"`
	CreatedAt  time.Time  `gorm:"not null"`
}

// ListAllowlist returns every entry ordered by its entry text, the
// default scope's first.
func (s *Store) ListAllowlist(ctx context.Context) ([]AllowlistEntry, error) {
	var out []AllowlistEntry
	if err := s.r.WithContext(ctx).Order("entry").Order("scope_key").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: listing allowlist: %w", err)
	}
	return out, nil
}

// AddAllowlistEntries inserts entries in one transaction with the revision
// bump: either all are added or none. Entry, Note and AddedBy are taken from
// each element; ID is assigned. An entry that already exists, or appears
// twice in entries, fails the whole call with a *DuplicateError naming it;
// one that would pass MaxAllowlistEntries, with an *AllowlistFullError.
// It returns the new revision.
func (s *Store) AddAllowlistEntries(ctx context.Context, expectRevision int64, entries []AllowlistEntry, audit ...Audit) (int64, error) {
	if len(entries) == 0 {
		return 0, fmt.Errorf("models: no allowlist entries to add; pass at least one")
	}
	for i, e := range entries {
		if e.Entry == "" {
			return 0, fmt.Errorf("models: allowlist entry #%d is empty; every entry needs its normalised host text", i+1)
		}
	}
	return s.mutateConfig(ctx, SectionAllowlist, expectRevision, audit, func(tx *gorm.DB) error {
		return insertAllowlistRows(tx, entries)
	})
}

// insertAllowlistRows adds rows inside tx, within MaxAllowlistEntries
// (*AllowlistFullError) and each unique in its scope (*DuplicateError):
// every way an entry is added (a paste, an approved access request) goes
// through it.
func insertAllowlistRows(tx *gorm.DB, entries []AllowlistEntry) error {
	if err := checkAllowlistRoom(tx, len(entries)); err != nil {
		return err
	}
	for _, e := range entries {
		row := e
		row.ID = 0
		// One row per statement, so a unique violation tells us which
		// entry it was; SQLite's message names only the column.
		if err := tx.Create(&row).Error; err != nil {
			if isUniqueViolation(err) {
				return &DuplicateError{Kind: "allowlist entry", Value: e.Entry + scopeSuffix(e.ScopeKey)}
			}
			return fmt.Errorf("models: adding allowlist entry %q: %w", e.Entry, err)
		}
	}
	return nil
}

// RemoveAllowlistEntries deletes the named entries in one transaction with
// the revision bump. If any of them does not exist, nothing is removed and a
// *NotFoundError names it. Repeating a name in entries is harmless. It
// returns the new revision.
func (s *Store) RemoveAllowlistEntries(ctx context.Context, expectRevision int64, entries []string, audit ...Audit) (int64, error) {
	if len(entries) == 0 {
		return 0, fmt.Errorf("models: no allowlist entries to remove; pass at least one")
	}
	return s.mutateConfig(ctx, SectionAllowlist, expectRevision, audit, func(tx *gorm.DB) error {
		seen := make(map[string]bool, len(entries))
		for _, e := range entries {
			if seen[e] {
				continue
			}
			seen[e] = true
			res := tx.Where("entry = ?", e).Delete(&AllowlistEntry{})
			if res.Error != nil {
				return fmt.Errorf("models: removing allowlist entry %q: %w", e, res.Error)
			}
			if res.RowsAffected == 0 {
				return &NotFoundError{Kind: "allowlist entry", Value: e}
			}
		}
		return nil
	})
}
