package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// AnyRevision, passed as expectRevision, applies a mutation whatever the
// stored version is. Use it for scripted changes, never for a form an admin
// filled in from a page that may be stale.
const AnyRevision int64 = -1

// Section is one part of the configuration with a version of its own, so
// that a stale form is refused only when what it edits has changed: an
// admin adding allowlist entries is not stopped because someone else
// changed the timeout meanwhile.
type Section string

const (
	SectionAllowlist    Section = "allowlist"
	SectionSettings     Section = "settings"
	SectionIntegrations Section = "integrations"
)

var sections = []Section{SectionAllowlist, SectionSettings, SectionIntegrations}

// sectionVersion is one row per section.
type sectionVersion struct {
	Section Section `gorm:"primaryKey"`
	Value   int64   `gorm:"not null;default:0"`
}

func (sectionVersion) TableName() string { return "section_versions" }

// Version returns a section's version: it grows by one with every
// committed change to that section. Forms carry it, and mutations of the
// section take it as their expectRevision.
func (s *Store) Version(ctx context.Context, section Section) (int64, error) {
	var v int64
	if err := s.r.WithContext(ctx).Raw("SELECT value FROM section_versions WHERE section = ?", section).Scan(&v).Error; err != nil {
		return 0, fmt.Errorf("models: reading the %s version from %q: %w", section, s.path, err)
	}
	return v, nil
}

// DefaultWatchInterval is the polling period Watch uses when given zero. It
// keeps a second process on the same file no more than half a second behind.
const DefaultWatchInterval = 300 * time.Millisecond

// revisionRow is the single row holding the configuration revision: one
// counter for the allowlist and the settings together, so "has anything the
// guard depends on changed?" is one cheap read.
type revisionRow struct {
	ID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Value int64 `gorm:"not null;default:0"`
	// ChangedAt is when the last change committed (the writer's clock),
	// so each replica can measure how long the change took to reach it.
	// Null until the first change after migration 4.
	ChangedAt *time.Time
}

func (revisionRow) TableName() string { return "revision" }

// Revision returns the current configuration revision. It starts at 0 and
// grows by one with every committed change to any section; other
// processes poll it to know when to reload.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	var v int64
	if err := s.r.WithContext(ctx).Raw("SELECT value FROM revision WHERE id = 1").Scan(&v).Error; err != nil {
		return 0, fmt.Errorf("models: reading revision from %q: %w", s.path, err)
	}
	return v, nil
}

// RevisionChanged returns the revision and when the change that made it
// committed (zero if no change since migration 4 recorded one).
func (s *Store) RevisionChanged(ctx context.Context) (int64, time.Time, error) {
	var row revisionRow
	if err := s.r.WithContext(ctx).Where("id = 1").Take(&row).Error; err != nil {
		return 0, time.Time{}, fmt.Errorf("models: reading revision from %q: %w", s.path, err)
	}
	if row.ChangedAt == nil {
		return row.Value, time.Time{}, nil
	}
	return row.Value, *row.ChangedAt, nil
}

// mutateConfig runs fn in one write transaction together with the bump of
// section's version (compared with expectVersion), the bump of the global
// revision and the change's audit records, so a change, its versions and
// its record commit or roll back as one. It returns the section's new
// version.
func (s *Store) mutateConfig(ctx context.Context, section Section, expectVersion int64, audit []Audit, fn func(tx *gorm.DB) error) (int64, error) {
	if expectVersion < AnyRevision {
		return 0, fmt.Errorf("models: expected version %d is invalid; pass the version you read, or AnyRevision (-1)", expectVersion)
	}
	var v int64
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if v, err = bumpVersion(tx, section, expectVersion); err != nil {
			return err
		}
		if err := s.bumpRevision(tx); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		return writeAudit(tx, audit)
	})
	if err != nil {
		return 0, err
	}
	return v, nil
}

// bumpRevision moves the global revision on, inside a change's
// transaction, and announces it: every replica then reloads within the
// bound changes keep.
func (s *Store) bumpRevision(tx *gorm.DB) error {
	if err := tx.Exec("UPDATE revision SET value = value + 1, changed_at = ? WHERE id = 1", time.Now().UTC()).Error; err != nil {
		return fmt.Errorf("models: bumping revision: %w", err)
	}
	return s.notifyChange(tx)
}

// bumpVersion increments section's version if it still equals expect (or
// expect is AnyRevision). The compare and the increment are one statement
// inside a BEGIN IMMEDIATE transaction, so two admins saving at once cannot
// both win.
func bumpVersion(tx *gorm.DB, section Section, expect int64) (int64, error) {
	var got []int64
	err := tx.Raw("UPDATE section_versions SET value = value + 1 WHERE section = ? AND (? = -1 OR value = ?) RETURNING value",
		section, expect, expect).Scan(&got).Error
	if err != nil {
		return 0, fmt.Errorf("models: bumping the %s version: %w", section, err)
	}
	if len(got) == 1 {
		return got[0], nil
	}
	var current int64
	if err := tx.Raw("SELECT value FROM section_versions WHERE section = ?", section).Scan(&current).Error; err != nil {
		return 0, fmt.Errorf("models: reading the %s version after a conflict: %w", section, err)
	}
	return 0, &ConflictError{Section: section, Expected: expect, Current: current}
}

// Watch polls the revision every interval (DefaultWatchInterval if zero or
// negative) and calls onChange with the new value whenever it differs from
// the last one seen. Polling, rather than an in-process notification, is what
// lets a second process on the same file (the CLI, a second console) notice
// changes. On PostgreSQL it also LISTENs (see listen), so a change made by
// any replica is read as soon as it commits; the polling stays on as the
// fallback while that connection is lost. onChange runs on Watch's
// goroutine, so a slow callback delays the next poll instead of piling up
// calls. When onChange returns an error the revision does not count as
// seen: the next poll calls it again with the revision it then reads, so
// a change that failed to load (a database failover between the poll and
// the reload) is retried until it loads, not left behind until some later
// change happens to arrive.
//
// Watch blocks until ctx ends, then returns nil. It returns an error only if
// the first read fails or the store is closed; a failed poll in between is
// retried on the next tick, because one SQLITE_BUSY must not stop the guard
// from ever seeing new configuration.
func (s *Store) Watch(ctx context.Context, interval time.Duration, onChange func(rev int64) error) error {
	if onChange == nil {
		return fmt.Errorf("models: Watch needs an onChange callback; pass a func(rev int64) error")
	}
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	last, err := s.Revision(ctx)
	if err != nil {
		return err
	}
	return s.WatchFrom(ctx, interval, last, onChange)
}

// WatchFrom is Watch starting from a revision the caller already holds
// (the one its configuration was loaded at) rather than from the one read
// when watching starts: a change committed in between is then reported
// at the first poll instead of never.
func (s *Store) WatchFrom(ctx context.Context, interval time.Duration, last int64, onChange func(rev int64) error) error {
	if onChange == nil {
		return fmt.Errorf("models: Watch needs an onChange callback; pass a func(rev int64) error")
	}
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var wake chan struct{}
	if s.engine == enginePostgres {
		wake = make(chan struct{}, 1)
		lctx, stop := context.WithCancel(ctx)
		defer stop()
		go s.listen(lctx, wake)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-wake:
		}
		if s.closed.Load() {
			return fmt.Errorf("models: Watch on %q stopped: the store was closed", s.path)
		}
		rev, err := s.Revision(ctx)
		if err != nil || rev == last {
			continue
		}
		if onChange(rev) == nil {
			last = rev
		}
	}
}
