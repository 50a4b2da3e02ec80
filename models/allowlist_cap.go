package models

import (
	"fmt"

	"gorm.io/gorm"
)

// MaxAllowlistEntries caps the allowlist. The guard matches any number of
// entries in constant time, but every process loads the whole list at
// start and on each reload, and the console shows it on one card: a
// million-line paste once made that card 1 GB and every command take
// 10 s. Wildcards (*.example.com) cover many hosts in one entry.
const MaxAllowlistEntries = 10_000

// AllowlistFullError refuses an add that would take the allowlist past
// MaxAllowlistEntries. Nothing was added.
type AllowlistFullError struct {
	Listed, Adding int
}

func (e *AllowlistFullError) Error() string { return e.Problem() + "; " + e.Fix() }

// Problem says what is wrong, Fix what to do, as lower-case clauses.
func (e *AllowlistFullError) Problem() string {
	return fmt.Sprintf("the allowlist holds %d entries and adding %d would pass its cap of %d", e.Listed, e.Adding, MaxAllowlistEntries)
}

// Fix says how to get under the cap.
func (e *AllowlistFullError) Fix() string {
	return fmt.Sprintf("add at most %d, remove entries no longer needed, or cover many hosts with one wildcard entry such as *.example.com", max(0, MaxAllowlistEntries-e.Listed))
}

// checkAllowlistRoom counts the list inside the add's transaction, so two
// adds at once cannot both pass the cap.
func checkAllowlistRoom(tx *gorm.DB, adding int) error {
	var n int64
	if err := tx.Model(&AllowlistEntry{}).Count(&n).Error; err != nil {
		return fmt.Errorf("models: counting allowlist entries: %w", err)
	}
	if int(n)+adding > MaxAllowlistEntries {
		return &AllowlistFullError{Listed: int(n), Adding: adding}
	}
	return nil
}
