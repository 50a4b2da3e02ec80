package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
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
	t, err := a.store.FindActiveToken(ctx, hashToken(token))
	if errors.Is(err, models.ErrNotFound) {
		return "", tools.ErrBadToken
	}
	if err != nil {
		return "", err
	}
	_ = a.store.TouchToken(ctx, t.ID, time.Now()) // best effort: last-used is a hint
	return t.Name, nil
}

// tokenPrefix makes a leaked token recognisable in logs and secret scanners.
const tokenPrefix = "obt_"

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
