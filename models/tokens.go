package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// touchEvery is the coarsest LastUsedAt granularity we accept in exchange
// for not writing on every agent request.
const touchEvery = time.Minute

// AgentToken is an API token an agent presents. Only a hash of the secret is
// stored (computed by the caller, e.g. hex SHA-256), so a copy of the
// database does not hand out working tokens.
type AgentToken struct {
	ID         int64     `gorm:"primaryKey"`
	Name       string    `gorm:"not null;uniqueIndex"`
	Hash       string    `gorm:"not null;uniqueIndex"`
	CreatedAt  time.Time `gorm:"not null"`
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Active reports whether the token has not been revoked.
func (t AgentToken) Active() bool { return t.RevokedAt == nil }

// CreateToken stores a new token under a unique name, with its audit
// records in the same transaction. A name or hash already in use (even by a
// revoked token) is a *DuplicateError.
func (s *Store) CreateToken(ctx context.Context, name, hash string, audit ...Audit) (AgentToken, error) {
	if name == "" {
		return AgentToken{}, fmt.Errorf("models: agent token needs a name, e.g. the agent it belongs to")
	}
	if hash == "" {
		return AgentToken{}, fmt.Errorf("models: agent token %q has an empty hash; pass the hash of the secret, never the secret itself", name)
	}
	tok := AgentToken{Name: name, Hash: hash}
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&tok).Error; err != nil {
			if isUniqueViolation(err) {
				return errDuplicateToken
			}
			return fmt.Errorf("models: creating agent token %q: %w", name, err)
		}
		return writeAudit(tx, audit)
	})
	if errors.Is(err, errDuplicateToken) {
		return AgentToken{}, s.duplicateToken(ctx, name)
	}
	if err != nil {
		return AgentToken{}, err
	}
	return tok, nil
}

// errDuplicateToken leaves the transaction so that duplicateToken can look
// outside it (after the rollback) at which column the insert hit.
var errDuplicateToken = errors.New("models: duplicate agent token")

// duplicateToken works out which unique column a failed insert hit.
func (s *Store) duplicateToken(ctx context.Context, name string) error {
	var n int64
	if err := s.w.WithContext(ctx).Model(&AgentToken{}).Where("name = ?", name).Count(&n).Error; err == nil && n == 0 {
		// The hash itself is not secret, but it is long and meaningless to
		// an admin; say what it means instead.
		return &DuplicateError{Kind: "agent token secret (hash) for", Value: name}
	}
	return &DuplicateError{Kind: "agent token", Value: name}
}

// ListTokens returns all tokens, revoked ones included, ordered by name.
func (s *Store) ListTokens(ctx context.Context) ([]AgentToken, error) {
	var out []AgentToken
	if err := s.r.WithContext(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: listing agent tokens: %w", err)
	}
	return out, nil
}

// RevokeToken marks the named token revoked, with its audit records in the
// same transaction, and returns the token as it was before. Revoking an
// already revoked token changes nothing and writes no record: the returned
// token's RevokedAt says since when. An unknown name is a *NotFoundError.
func (s *Store) RevokeToken(ctx context.Context, name string, audit ...Audit) (AgentToken, error) {
	var before AgentToken
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []AgentToken
		if err := tx.Where("name = ?", name).Limit(1).Find(&rows).Error; err != nil {
			return fmt.Errorf("models: revoking agent token %q: %w", name, err)
		}
		if len(rows) == 0 {
			return &NotFoundError{Kind: "agent token", Value: name}
		}
		if before = rows[0]; before.RevokedAt != nil {
			return nil
		}
		if err := tx.Model(&AgentToken{}).Where("id = ?", before.ID).Update("revoked_at", time.Now().UTC()).Error; err != nil {
			return fmt.Errorf("models: revoking agent token %q: %w", name, err)
		}
		return writeAudit(tx, audit)
	})
	if err != nil {
		return AgentToken{}, err
	}
	return before, nil
}

// FindActiveToken returns the unrevoked token with the given hash, or a
// *NotFoundError (revoked and unknown tokens look the same to a caller, on
// purpose).
func (s *Store) FindActiveToken(ctx context.Context, hash string) (AgentToken, error) {
	var rows []AgentToken
	err := s.r.WithContext(ctx).Where("hash = ? AND revoked_at IS NULL", hash).Limit(1).Find(&rows).Error
	if err != nil {
		return AgentToken{}, fmt.Errorf("models: looking up agent token: %w", err)
	}
	if len(rows) == 0 {
		return AgentToken{}, &NotFoundError{Kind: "active agent token with hash", Value: abbreviate(hash)}
	}
	return rows[0], nil
}

// TouchToken records that token id was used at now. It writes at most once
// per touchEvery per token: in-process via a memo, across processes via the
// WHERE clause, so calling it on every request is cheap.
func (s *Store) TouchToken(ctx context.Context, id int64, now time.Time) error {
	now = now.UTC()
	s.touchMu.Lock()
	last, ok := s.touched[id]
	s.touchMu.Unlock()
	if ok && now.Sub(last) < touchEvery {
		return nil
	}
	res := s.w.WithContext(ctx).Model(&AgentToken{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at <= ?)", id, now.Add(-touchEvery)).
		Update("last_used_at", now)
	if res.Error != nil {
		return fmt.Errorf("models: recording use of agent token %d: %w", id, res.Error)
	}
	stored := now
	if res.RowsAffected == 0 {
		// Another process touched it within the minute. Remember its time,
		// not ours, or we would skip past the moment the next write is due.
		var tok AgentToken
		err := s.r.WithContext(ctx).Select("last_used_at").Where("id = ?", id).Limit(1).Find(&tok).Error
		if err != nil {
			return fmt.Errorf("models: reading last use of agent token %d: %w", id, err)
		}
		if tok.LastUsedAt == nil {
			return nil // unknown token: nothing to record or remember
		}
		stored = tok.LastUsedAt.UTC()
	}
	s.touchMu.Lock()
	s.touched[id] = stored
	s.touchMu.Unlock()
	return nil
}

// abbreviate shortens a hash for an error message.
func abbreviate(s string) string {
	if len(s) <= 12 {
		return s
	}
	return s[:12] + "…"
}
