package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// webRead is a conversation that has read the web, and until when it
// counts as having read it. Every side effect of such a conversation needs
// a person's confirmation (tools/confirm.go); the mark is kept here, not
// only in the process that saw the read, because the next call of the
// conversation may reach another replica. The conversation's name is an
// agent's free text of any length, so the row keeps its SHA-256: a key of
// fixed size that every replica computes alike.
type webRead struct {
	ThreadHash string    `gorm:"primaryKey"`
	ExpiresAt  time.Time `gorm:"not null;index"`
}

func (webRead) TableName() string { return "web_reads" }

// threadKey is the stored key of a conversation.
func threadKey(thread string) string {
	sum := sha256.Sum256([]byte(thread))
	return hex.EncodeToString(sum[:])
}

// markWebRead is the upsert of MarkWebRead: a later expiry replaces an
// earlier one, never the other way round, whichever replica writes last.
const markWebRead = "INSERT INTO web_reads (thread_hash, expires_at) VALUES (?, ?) " +
	"ON CONFLICT (thread_hash) DO UPDATE SET expires_at = excluded.expires_at WHERE web_reads.expires_at < excluded.expires_at"

// MarkWebRead records that thread's conversation has read the web and
// counts as having read it until until (or later, if already stored so).
func (s *Store) MarkWebRead(ctx context.Context, thread string, until time.Time) error {
	if err := s.w.WithContext(ctx).Exec(markWebRead, threadKey(thread), until.UTC()).Error; err != nil {
		return fmt.Errorf("models: recording that a conversation read the web: %w", err)
	}
	return nil
}

// WebReadUntil is until when thread's conversation counts as having read
// the web: the zero time if no replica recorded it. An expired row not
// purged yet is returned as it is; the caller compares it with the time.
func (s *Store) WebReadUntil(ctx context.Context, thread string) (time.Time, error) {
	var row webRead
	err := s.r.WithContext(ctx).Where("thread_hash = ?", threadKey(thread)).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("models: reading whether a conversation read the web: %w", err)
	}
	return row.ExpiresAt, nil
}

// PurgeWebReads deletes the marks expired by now and says how many.
func (s *Store) PurgeWebReads(ctx context.Context, now time.Time) (int64, error) {
	res := s.w.WithContext(ctx).Where("expires_at <= ?", now.UTC()).Delete(&webRead{})
	if res.Error != nil {
		return 0, fmt.Errorf("models: purging expired web reads: %w", res.Error)
	}
	return res.RowsAffected, nil
}
