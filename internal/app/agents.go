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
	t, err := a.store.FindActiveToken(ctx, tools.HashToken(token))
	if errors.Is(err, models.ErrNotFound) {
		return "", tools.ErrBadToken
	}
	if err != nil {
		return "", err
	}
	if a.uses != nil {
		a.uses.note(t.ID, time.Now()) // written from the background (token_uses.go)
	}
	return t.Name, nil
}
