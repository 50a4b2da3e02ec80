package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// purgeChunk is how many rows one purge transaction deletes. Each chunk is
// its own short transaction, so the refusal writer and admins saving the
// allowlist get the write lock in between instead of waiting for a purge of
// months of history.
const purgeChunk = 2000

// PurgeRefusalsBefore deletes refusals whose Time is before t, oldest first,
// in chunks of purgeChunk rows. It stops early when ctx ends and reports how
// many rows it deleted so far in either case.
func (s *Store) PurgeRefusalsBefore(ctx context.Context, t time.Time) (int64, error) {
	return s.purgeBefore(ctx, "refusals", t)
}

// purgeBefore deletes the rows of table (refusals or decisions: a fixed
// name, never input) whose time is before t, in chunks.
func (s *Store) purgeBefore(ctx context.Context, table string, t time.Time) (int64, error) {
	var total int64
	cutoff := t.UTC()
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("models: purging %s before %s stopped after %d rows: %w", table, cutoff.Format(time.RFC3339), total, err)
		}
		res := s.purgeChunk(ctx, table, cutoff)
		if res.Error != nil {
			return total, fmt.Errorf("models: purging %s before %s after %d rows: %w", table, cutoff.Format(time.RFC3339), total, res.Error)
		}
		total += res.RowsAffected
		if res.RowsAffected < purgeChunk {
			return total, nil
		}
	}
}

// purgeChunk deletes one chunk of table's rows before cutoff, with their
// search text for refusals, in one transaction.
func (s *Store) purgeChunk(ctx context.Context, table string, cutoff time.Time) *gorm.DB {
	const chunk = " WHERE id IN (SELECT id FROM %s WHERE time < ? ORDER BY time LIMIT ?)"
	var res *gorm.DB
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if table == "refusals" {
			if err := tx.Exec("DELETE FROM refusal_texts"+fmt.Sprintf(chunk, table), cutoff, purgeChunk).Error; err != nil {
				return err
			}
		}
		res = tx.Exec("DELETE FROM "+table+fmt.Sprintf(chunk, table), cutoff, purgeChunk)
		return res.Error
	})
	if res == nil || (err != nil && res.Error == nil) {
		return &gorm.DB{Error: err}
	}
	return res
}
