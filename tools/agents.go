package tools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

// Agents verifies an agent's API token and returns the agent's name.
// internal/app implements it over the store, which keeps only hashes.
type Agents interface {
	VerifyToken(ctx context.Context, token string) (agent string, err error)
}

// ErrBadToken is returned by Agents for a missing, unknown or revoked token.
var ErrBadToken = errors.New("the API token is missing, unknown or revoked")

// BearerToken extracts the token of an "Authorization: Bearer …" header:
// the one parser for every front end that takes agents' tokens.
func BearerToken(r *http.Request) (string, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return "", false
	}
	return fields[1], true
}

// TokenPrefix makes a leaked token recognisable in logs and secret scanners.
const TokenPrefix = "obt_"

// NewToken returns a new agent token: 256 random bits.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is what the store keeps of a token. A token is 256 random
// bits, so a plain SHA-256 suffices: there is nothing to guess, and no
// password stretching is needed for high-entropy secrets.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
