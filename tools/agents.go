package tools

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// Agents verifies an agent's API token and returns the agent's name.
// cmd/console implements it over the store, which keeps only hashes.
type Agents interface {
	VerifyToken(ctx context.Context, token string) (agent string, err error)
}

// ErrBadToken is returned by Agents for a missing, unknown or revoked token.
var ErrBadToken = errors.New("the API token is missing, unknown or revoked")

// bearerToken extracts the token of an "Authorization: Bearer …" header.
func bearerToken(r *http.Request) (string, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return "", false
	}
	return fields[1], true
}
