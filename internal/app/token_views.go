package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// A new agent token is shown once, on the page the create form redirects
// to. The redirect's GET may reach another replica than the POST, so the
// token waits for that view in the database (models.TokenView), sealed
// with the secret key, bound to the creating session and spent by its
// first view on any replica.

// TokenViewTTL is how long a new token waits for its one view.
const TokenViewTTL = 5 * time.Minute

// NewToken is a new token's one view.
type NewToken struct {
	Name string
	// Token is the secret; "" when the view was already shown.
	Token string
	// Base is the console's address when the token was made (for the
	// MCP and API addresses the page shows).
	Base string
}

// ErrNoTokenSecretKey is CreateTokenForView's error in a process opened
// without the secret key (ReadOnly): it cannot seal the token.
var ErrNoTokenSecretKey = errors.New("app: no secret key to keep a new token for its view; open the console with its secret key (CONSOLE_SECRET_KEY, CONSOLE_SECRET_KEY_FILE or the key file beside the database)")

// CreateTokenForView mints a token for an agent, as CreateToken does, and
// keeps it for one view by session, in the same transaction: it returns
// the view's ID for its URL (only the ID's hash is stored). Nothing is
// created when the token cannot be sealed.
func (a *App) CreateTokenForView(ctx context.Context, now time.Time, actor, name string, session int64, base string) (string, error) {
	if err := CheckTokenName(name); err != nil {
		return "", err
	}
	if a.secrets == nil {
		return "", ErrNoTokenSecretKey
	}
	secret, err := tools.NewToken()
	if err != nil {
		return "", err
	}
	sealed, err := a.secrets.Seal(secret)
	if err != nil {
		return "", fmt.Errorf("app: sealing the new token %q: %w", name, err)
	}
	id := rand.Text() // 128 random bits; the URL's capability
	view := models.ParkedView{IDHash: tools.HashToken(id), Session: session, View: models.TokenView{Name: name, Sealed: sealed, Base: base},
		Now: now, Expires: now.Add(TokenViewTTL)}
	record := models.Audit{Actor: actor, Action: ActionTokenCreate, Target: name, After: "active"}
	if _, err := a.store.CreateTokenWithView(ctx, name, tools.HashToken(secret), view, record); err != nil {
		return "", err
	}
	return id, nil
}

// TakeTokenView returns session's view id and spends it: the first call
// has the token, later ones (on any replica) the name with Token "". An
// unknown or expired view, or another session's, is models.ErrNotFound.
//
// The token is opened before the view is spent: a replica without the
// key the token was sealed with answers an error and leaves the view, so
// a reload that reaches a replica with the right key still shows it.
func (a *App) TakeTokenView(ctx context.Context, now time.Time, session int64, id string) (NewToken, error) {
	var token string
	v, err := a.store.TakeTokenView(ctx, tools.HashToken(id), session, now, func(sealed string) error {
		if a.secrets == nil {
			return ErrNoTokenSecretKey
		}
		var err error
		if token, err = a.secrets.Open(sealed); err != nil {
			return fmt.Errorf("app: a new token does not open with this replica's secret key (every replica needs the same CONSOLE_SECRET_KEY or key file); open the page again on a replica with that key, or revoke the token and create another: %w", err)
		}
		return nil
	})
	if err != nil {
		return NewToken{}, err
	}
	out := NewToken{Name: v.Name, Base: v.Base}
	if v.Sealed != "" {
		out.Token = token
	}
	return out, nil
}
