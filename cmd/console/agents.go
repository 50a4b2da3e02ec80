package main

import (
	"context"
	"errors"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// storeAgents verifies agents' API tokens against the store, which keeps
// only their SHA-256 hashes: a token is 256 random bits, so a plain hash
// is enough (no password stretching is needed for high-entropy secrets).
type storeAgents struct{ store *models.Store }

func (a storeAgents) VerifyToken(ctx context.Context, token string) (string, error) {
	t, err := a.store.FindActiveToken(ctx, tools.HashToken(token))
	if errors.Is(err, models.ErrNotFound) {
		return "", tools.ErrBadToken
	}
	if err != nil {
		return "", err
	}
	_ = a.store.TouchToken(ctx, t.ID, time.Now()) // best effort: last-used is a hint
	return t.Name, nil
}
