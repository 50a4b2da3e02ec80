package app

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/models"
)

// The identity operations (tokens.go, users.go) change only the database:
// the running console reads users and tokens where it checks them, so no
// reload follows them. That is why an App over a store alone is enough
// for them: the command line's `token` and `user` commands open one with
// OpenStoreOnly rather than building a guard and loading integrations
// (whose key file a user change must not create).

// StoreOptions configure ForStore.
type StoreOptions struct {
	// PasswordCost is bcrypt's cost for new password hashes; zero means
	// bcrypt.DefaultCost. Tests lower it.
	PasswordCost int
	// Log receives the app's own events; nil means warnings to stderr.
	Log *slog.Logger
}

// ForStore returns an App over store alone: its identity operations work,
// and it runs no guard, tool or refusal writer. Close closes store.
func ForStore(store *models.Store, opts StoreOptions) *App {
	a := &App{store: store, log: opts.Log, passwordCost: opts.PasswordCost}
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return a
}

// OpenStoreOnly opens the database at path (see OpenStore for mode) as an
// App over the store alone (see ForStore).
func OpenStoreOnly(path string, mode DBMode) (*App, error) {
	store, err := OpenStore(path, mode)
	if err != nil {
		return nil, err
	}
	return ForStore(store, StoreOptions{}), nil
}

// ErrWrongPassword is a current password that does not match.
var ErrWrongPassword = errors.New("this is not the current password")

// ErrPasswordsDiffer is a new password and its repetition that differ.
var ErrPasswordsDiffer = errors.New("the two passwords differ")

// ErrSetupDone is first-run setup asked for once a user exists.
var ErrSetupDone = errors.New("setup is already done: a user exists; sign in, or add an admin with `console user add --role admin NAME`")

// AlreadyRevokedError is a token revoked a second time: nothing changed.
type AlreadyRevokedError struct {
	Name  string
	Since time.Time
}

func (e *AlreadyRevokedError) Error() string {
	return fmt.Sprintf("the token %q is already revoked (since %s); nothing changed", e.Name, e.Since.Local().Format("2006-01-02 15:04"))
}

// hashPassword is the one place a password becomes its stored hash.
func (a *App) hashPassword(pw string) (string, error) {
	cost := a.passwordCost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	return string(hash), err
}
