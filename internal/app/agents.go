package app

import (
	"context"
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
	hash, now := tools.HashToken(token), time.Now()
	if t, ok := a.tokens.get(hash, now); ok { // token_cache.go
		a.noteUse(t.id, now)
		return t.name, nil
	}
	t, err := a.store.FindActiveToken(ctx, hash)
	if errors.Is(err, models.ErrNotFound) {
		return "", tools.ErrBadToken
	}
	if err != nil {
		return "", err
	}
	a.tokens.put(hash, t.ID, t.Name, now)
	a.noteUse(t.ID, now)
	return t.Name, nil
}

func (a *App) noteUse(id int64, at time.Time) {
	if a.uses != nil {
		a.uses.note(id, at) // written from the background (token_uses.go)
	}
}
