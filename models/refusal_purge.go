package models

import (
	"context"
	"fmt"
	"time"
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
		res := s.w.WithContext(ctx).Exec(
			"DELETE FROM "+table+" WHERE id IN (SELECT id FROM "+table+" WHERE time < ? ORDER BY time LIMIT ?)",
			cutoff, purgeChunk)
		if res.Error != nil {
			return total, fmt.Errorf("models: purging %s before %s after %d rows: %w", table, cutoff.Format(time.RFC3339), total, res.Error)
		}
		total += res.RowsAffected
		if res.RowsAffected < purgeChunk {
			return total, nil
		}
	}
}
