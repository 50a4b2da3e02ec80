package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// AnyRevision, passed as expectRevision, applies a mutation whatever the
// stored revision is. Use it for scripted changes, never for a form an admin
// filled in from a page that may be stale.
const AnyRevision int64 = -1

// DefaultWatchInterval is the polling period Watch uses when given zero. It
// keeps a second process on the same file no more than half a second behind.
const DefaultWatchInterval = 300 * time.Millisecond

// revisionRow is the single row holding the configuration revision: one
// counter for the allowlist and the settings together, so "has anything the
// guard depends on changed?" is one cheap read.
type revisionRow struct {
	ID    int64 `gorm:"primaryKey;autoIncrement:false"`
	Value int64 `gorm:"not null;default:0"`
}

func (revisionRow) TableName() string { return "revision" }

// Revision returns the current configuration revision. It starts at 0 and
// grows by one with every committed change to the allowlist or settings.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	var v int64
	if err := s.r.WithContext(ctx).Raw("SELECT value FROM revision WHERE id = 1").Scan(&v).Error; err != nil {
		return 0, fmt.Errorf("models: reading revision from %q: %w", s.path, err)
	}
	return v, nil
}

// mutateConfig runs fn in one write transaction together with the revision
// bump, so a change and its revision commit or roll back as one. It returns
// the new revision.
func (s *Store) mutateConfig(ctx context.Context, expectRevision int64, fn func(tx *gorm.DB) error) (int64, error) {
	if expectRevision < AnyRevision {
		return 0, fmt.Errorf("models: expected revision %d is invalid; pass the revision you read, or AnyRevision (-1)", expectRevision)
	}
	var rev int64
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if rev, err = bumpRevision(tx, expectRevision); err != nil {
			return err
		}
		return fn(tx)
	})
	if err != nil {
		return 0, err
	}
	return rev, nil
}

// bumpRevision increments the revision if it still equals expect (or expect
// is AnyRevision). The compare and the increment are one statement inside a
// BEGIN IMMEDIATE transaction, so two admins saving at once cannot both win.
func bumpRevision(tx *gorm.DB, expect int64) (int64, error) {
	var got []int64
	err := tx.Raw("UPDATE revision SET value = value + 1 WHERE id = 1 AND (? = -1 OR value = ?) RETURNING value",
		expect, expect).Scan(&got).Error
	if err != nil {
		return 0, fmt.Errorf("models: bumping revision: %w", err)
	}
	if len(got) == 1 {
		return got[0], nil
	}
	var current int64
	if err := tx.Raw("SELECT value FROM revision WHERE id = 1").Scan(&current).Error; err != nil {
		return 0, fmt.Errorf("models: reading revision after conflict: %w", err)
	}
	return 0, &ConflictError{Expected: expect, Current: current}
}

// Watch polls the revision every interval (DefaultWatchInterval if zero or
// negative) and calls onChange with the new value whenever it differs from
// the last one seen. Polling, rather than an in-process notification, is what
// lets a second process on the same file (the CLI, a second console) notice
// changes. onChange runs on Watch's goroutine, so a slow callback delays the
// next poll instead of piling up calls.
//
// Watch blocks until ctx ends, then returns nil. It returns an error only if
// the first read fails or the store is closed; a failed poll in between is
// retried on the next tick, because one SQLITE_BUSY must not stop the guard
// from ever seeing new configuration.
func (s *Store) Watch(ctx context.Context, interval time.Duration, onChange func(rev int64)) error {
	if onChange == nil {
		return fmt.Errorf("models: Watch needs an onChange callback; pass a func(rev int64)")
	}
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	last, err := s.Revision(ctx)
	if err != nil {
		return err
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if s.closed.Load() {
			return fmt.Errorf("models: Watch on %q stopped: the store was closed", s.path)
		}
		rev, err := s.Revision(ctx)
		if err != nil || rev == last {
			continue
		}
		last = rev
		onChange(rev)
	}
}
