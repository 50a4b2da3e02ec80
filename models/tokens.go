package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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
	return s.createToken(ctx, name, hash, nil, audit)
}

// createToken is CreateToken, with also run in its transaction when set.
func (s *Store) createToken(ctx context.Context, name, hash string, also func(tx *gorm.DB) error, audit []Audit) (AgentToken, error) {
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
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
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

// RevokeToken marks the named token revoked, with its audit records and
// the move of the configuration revision in the same transaction, and
// returns the token as it was before. Revoking an
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
		// A revocation is a change every replica must enforce within the
		// bound a change keeps, in the tunnels a token already holds too
		// (they are checked again on every reload): the revision moves,
		// with its notification, but no section's version, so no form
		// an admin has open goes stale.
		if err := s.bumpRevision(tx); err != nil {
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
//
// It runs on every agent request (API, MCP, proxy), so it is one prepared
// statement scanned into plain values, not an ORM query.
func (s *Store) FindActiveToken(ctx context.Context, hash string) (AgentToken, error) {
	q := "SELECT id, name, hash, created_at, last_used_at FROM agent_tokens WHERE hash = ? AND revoked_at IS NULL LIMIT 1"
	if s.r.Dialector.Name() == "postgres" {
		q = strings.Replace(q, "?", "$1", 1)
	}
	st, err := s.rStmts.get(ctx, s.r, q)
	if err != nil {
		return AgentToken{}, fmt.Errorf("models: looking up agent token: %w", err)
	}
	var t AgentToken
	var lastUsed sql.NullTime
	err = st.QueryRowContext(ctx, hash).Scan(&t.ID, &t.Name, &t.Hash, &t.CreatedAt, &lastUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return AgentToken{}, &NotFoundError{Kind: "active agent token with hash", Value: abbreviate(hash)}
	}
	if err != nil {
		return AgentToken{}, fmt.Errorf("models: looking up agent token: %w", err)
	}
	if lastUsed.Valid {
		t.LastUsedAt = &lastUsed.Time
	}
	return t, nil
}

// TouchTokens records when each token was last used, in one transaction.
// Callers collect uses in memory and call it from the background, never
// on an agent's request: a write waits for the write lock, and a stalled
// database must not stall verification. It writes a token at most once per
// touchEvery: in-process via a memo, across processes via the WHERE clause.
// A token unknown to the database is skipped.
func (s *Store) TouchTokens(ctx context.Context, uses map[int64]time.Time) error {
	due := make(map[int64]time.Time, len(uses))
	s.touchMu.Lock()
	for id, at := range uses {
		at = at.UTC()
		if last, ok := s.touched[id]; !ok || at.Sub(last) >= touchEvery {
			due[id] = at
		}
	}
	s.touchMu.Unlock()
	if len(due) == 0 {
		return nil
	}
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for id, at := range due {
			err := tx.Model(&AgentToken{}).
				Where("id = ? AND (last_used_at IS NULL OR last_used_at <= ?)", id, at.Add(-touchEvery)).
				Update("last_used_at", at).Error
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("models: recording the last use of %d agent tokens: %w", len(due), err)
	}
	// Remember what is now stored, ours or another process's newer time,
	// so the next write is due a minute after the stored one.
	var rows []AgentToken
	ids := make([]int64, 0, len(due))
	for id := range due {
		ids = append(ids, id)
	}
	if err := s.r.WithContext(ctx).Select("id", "last_used_at").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return fmt.Errorf("models: reading last use of agent tokens: %w", err)
	}
	s.touchMu.Lock()
	for _, t := range rows {
		if t.LastUsedAt != nil {
			s.touched[t.ID] = t.LastUsedAt.UTC()
		}
	}
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
