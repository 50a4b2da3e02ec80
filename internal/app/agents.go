package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// VerifyToken names the agent whose API token this is. The store keeps
// only tokens' SHA-256 hashes: a token is 256 random bits, so a plain hash
// is enough (no password stretching is needed for high-entropy secrets).
// It implements tools.Agents.
func (a *App) VerifyToken(ctx context.Context, token string) (string, error) {
	sum, now := tokenSum(token), time.Now()
	// A hit is not noted as a use: an entry lasts tokenCacheFor, so a
	// token in use is looked up (and noted below) at least that often,
	// and its last use is shown to the minute.
	if t, ok := a.tokens.get(sum, now); ok { // token_cache.go
		return t.name, nil
	}
	gen := a.tokens.generation()
	t, err := a.lookups.do(ctx, sum, gen, func() (models.AgentToken, error) {
		return a.store.FindActiveToken(ctx, hex.EncodeToString(sum[:])) // tools.HashToken's text
	})
	if errors.Is(err, models.ErrNotFound) {
		return "", tools.ErrBadToken
	}
	if err != nil {
		return "", err
	}
	a.tokens.put(sum, t.ID, t.Name, now, gen)
	a.noteUse(t.ID, now)
	return t.Name, nil
}

// tokenSum is the SHA-256 of token, whose hex text (tools.HashToken) is
// what the store keeps. Every agent request verifies its token, so a
// token of usual length is hashed from the stack: []byte(token) and the
// hex text were three allocations a request.
func tokenSum(token string) [sha256.Size]byte {
	var buf [128]byte
	if len(token) > len(buf) {
		return sha256.Sum256([]byte(token))
	}
	return sha256.Sum256(buf[:copy(buf[:], token)])
}

func (a *App) noteUse(id int64, at time.Time) {
	if a.uses != nil {
		a.uses.note(id, at) // written from the background (token_uses.go)
	}
}
