package web

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// Identity is what the console needs for agents' tokens and console
// users: the application layer's operations (internal/app), which check
// the rules, write the change and its audit record in one transaction.
// It is declared here, by the handlers that use it, so it says exactly
// what they call; *app.App implements it.
type Identity interface {
	RevokeToken(ctx context.Context, actor, name string) error
	ListTokens(ctx context.Context) ([]app.Token, error)
	CreateTokenForView(ctx context.Context, now time.Time, actor, name string, session int64, base string) (string, error)
	TakeTokenView(ctx context.Context, now time.Time, session int64, id string) (app.NewToken, error)

	ListUsers(ctx context.Context) ([]app.User, error)
	UserByID(ctx context.Context, id int64) (app.User, error)
	CountUsers(ctx context.Context) (int64, error)
	AddUser(ctx context.Context, actor, name string, role models.Role, password string) (app.User, error)
	CreateFirstAdmin(ctx context.Context, name, password string) (app.User, error)
	SetUserRole(ctx context.Context, actor string, id int64, role models.Role) (app.User, error)
	ResetPassword(ctx context.Context, actor string, id int64, password string) (app.User, error)
	ChangeOwnPassword(ctx context.Context, id int64, current, password, repeat string) error
	RemoveUser(ctx context.Context, actor string, id int64) (app.User, error)
}

// The console words the application layer's rule errors as the sentence
// under a form field. It reads the typed error, never its text.

// tokenNameMessage is the sentence for a token name the rules refuse, or
// "" when err is not about the name.
func tokenNameMessage(err error) string {
	var ne *app.TokenNameError
	if !errors.As(err, &ne) {
		return ""
	}
	switch ne.Problem {
	case app.NameEmpty:
		return "Enter a name for the agent, e.g. helpdesk-bot."
	case app.NameTooLong:
		return fmt.Sprintf("The name is %d characters long; use at most %d.", len(ne.Name), app.MaxNameLength)
	}
	return fmt.Sprintf("%q is not a token name: use letters, digits, dots, hyphens or underscores, starting with a letter or digit, e.g. helpdesk-bot.", ne.Name)
}

// userNameMessage is the sentence for a user name the rules refuse, or "".
func userNameMessage(err error) string {
	var ne *app.UserNameError
	if !errors.As(err, &ne) {
		return ""
	}
	switch ne.Problem {
	case app.NameEmpty:
		return "Enter a name."
	case app.NameTooLong:
		return fmt.Sprintf("Use at most %d characters.", app.MaxNameLength)
	}
	return "Use a name without spaces, e.g. ada or ada.lovelace."
}

// newPasswordMessage is the sentence for a new password and its
// repetition: the policy first, then whether the two match; "" if fine.
func newPasswordMessage(pw, repeat string) string {
	var pe *app.PasswordError
	switch err := app.CheckPassword(pw); {
	case errors.As(err, &pe) && pe.Problem == app.PasswordTooShort:
		return fmt.Sprintf("Use at least %d characters.", app.MinPasswordChars)
	case errors.As(err, &pe):
		return fmt.Sprintf("Use at most %d bytes (bcrypt ignores the rest).", app.MaxPasswordBytes)
	case pw != repeat:
		return "The two passwords differ."
	}
	return ""
}
