package app

import (
	"context"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// Token is an agent's API token as a list shows it: never its secret,
// nor the secret's hash.
type Token struct {
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Active reports whether the token has not been revoked.
func (t Token) Active() bool { return t.RevokedAt == nil }

// CreateToken mints a token for the agent name and returns its secret,
// which exists only in this answer: the store keeps its hash. A bad name
// is a *TokenNameError; a name in use, even by a revoked token, is a
// *models.DuplicateError (errors.Is models.ErrDuplicate).
func (a *App) CreateToken(ctx context.Context, actor, name string) (string, error) {
	if err := CheckTokenName(name); err != nil {
		return "", err
	}
	secret, err := tools.NewToken()
	if err != nil {
		return "", err
	}
	record := models.Audit{Actor: actor, Action: ActionTokenCreate, Target: name, After: "active"}
	if _, err := a.store.CreateToken(ctx, name, tools.HashToken(secret), record); err != nil {
		return "", err
	}
	return secret, nil
}

// RevokeToken revokes the named token: the agent using it is refused from
// its next request. An unknown name is a *models.NotFoundError; a token
// revoked already is an *AlreadyRevokedError, and nothing is written.
func (a *App) RevokeToken(ctx context.Context, actor, name string) error {
	record := models.Audit{Actor: actor, Action: ActionTokenRevoke, Target: name, Before: "active", After: "revoked"}
	before, err := a.store.RevokeToken(ctx, name, record)
	if err != nil {
		return err
	}
	a.tokens.clear() // refused from its next request, here at once
	if before.RevokedAt != nil {
		return &AlreadyRevokedError{Name: name, Since: *before.RevokedAt}
	}
	return nil
}

// ListTokens returns every token, revoked ones included, by name.
func (a *App) ListTokens(ctx context.Context) ([]Token, error) {
	rows, err := a.store.ListTokens(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Token, len(rows))
	for i, t := range rows {
		out[i] = Token{Name: t.Name, CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, RevokedAt: t.RevokedAt}
	}
	return out, nil
}
