package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/outboundhq/outbound/models"
)

// DBMode says whether opening may create the database. SQLite creates a
// missing file on open, so a mistyped path would otherwise answer a
// read-only command from a brand new, empty database (PUBLIC WEB, no
// tokens, no refusals) and look like everything had been lost.
type DBMode int

const (
	// MustExist is for every command but the two that start a database:
	// one that enforces the policy (mcp, proxy, a tool call) would
	// otherwise run a mistyped path under a new database's PUBLIC WEB, and
	// one that changes it would save the change where nobody reads it.
	MustExist DBMode = iota
	// MayCreate is for the console (serve) and init, where a first run
	// legitimately starts a new database.
	MayCreate
)

// MissingDatabaseError is the refusal to open a database that is not there
// when the caller said it must exist. Its text names the path, and the
// absolute one when the path is relative: a process started from another
// directory (an MCP client often starts it from / or $HOME) looked there.
// The front end words the fix (its flags, its commands).
type MissingDatabaseError struct{ Path string }

func (e *MissingDatabaseError) Error() string {
	if models.IsPostgres(e.Path) {
		return "the PostgreSQL database " + e.Where() + " holds no Outbound schema yet"
	}
	return "there is no database at " + e.Where()
}

// Where is the path as given, followed by the absolute path in
// parentheses when the two differ (a PostgreSQL URL, without its password,
// as it is).
func (e *MissingDatabaseError) Where() string {
	if models.IsPostgres(e.Path) {
		return models.DisplayName(e.Path)
	}
	if abs, err := filepath.Abs(e.Path); err == nil && abs != e.Path {
		return fmt.Sprintf("%s (%s)", e.Path, abs)
	}
	return e.Path
}

// OpenStore opens the database at path, refusing a missing file when mode
// is MustExist. A postgres:// URL opens that PostgreSQL database; there,
// MustExist refuses a database that holds no Outbound schema yet, as it
// refuses a missing SQLite file.
func OpenStore(path string, mode DBMode) (*models.Store, error) {
	return OpenStoreContext(context.Background(), path, mode)
}

// OpenStoreContext is OpenStore whose wait for another process's schema
// migration ends with ctx (models.OpenContext): the long-running
// commands pass the context their signals end.
func OpenStoreContext(ctx context.Context, path string, mode DBMode) (*models.Store, error) {
	if models.IsPostgres(path) {
		open := models.OpenContext
		if mode == MustExist {
			open = models.OpenExistingContext
		}
		store, err := open(ctx, path)
		var ni *models.NotInitialisedError
		switch {
		case errors.As(err, &ni):
			return nil, &MissingDatabaseError{Path: path}
		case err != nil:
			return nil, &OpenError{Path: models.DisplayName(path), Err: err}
		}
		return store, nil
	}
	if mode == MustExist && path != "" { // models.Open explains an empty path
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &MissingDatabaseError{Path: path}
		}
	}
	store, err := models.OpenContext(ctx, path)
	if err != nil {
		return nil, &OpenError{Path: path, Err: err}
	}
	return store, nil
}

// OpenError is a database that exists (or may be created) but cannot be
// opened; Err says why.
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string {
	return fmt.Sprintf("cannot open the database %s: %v", e.Path, e.Err)
}
func (e *OpenError) Unwrap() error { return e.Err }
