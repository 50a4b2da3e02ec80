package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/outboundhq/outbound/models"
)

// DBMode says whether opening may create the database. SQLite creates a
// missing file on open, so a mistyped path would otherwise answer a
// read-only command from a brand new, empty database (PUBLIC WEB, no
// tokens, no refusals) and look like everything had been lost.
type DBMode int

const (
	// MustExist is for commands that only read the configuration or log.
	MustExist DBMode = iota
	// MayCreate is for commands that change things or run the console,
	// where a first run legitimately starts a new database.
	MayCreate
)

// MissingDatabaseError is the refusal to open a database that is not there
// when the caller said it must exist.
type MissingDatabaseError struct{ Path string }

func (e *MissingDatabaseError) Error() string {
	return fmt.Sprintf("there is no database at %s; check --db or CONSOLE_DB (the console creates it on its first `console serve` or change)", e.Path)
}

// OpenStore opens the database at path, refusing a missing file when mode
// is MustExist.
func OpenStore(path string, mode DBMode) (*models.Store, error) {
	if mode == MustExist && path != "" { // models.Open explains an empty path
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &MissingDatabaseError{Path: path}
		}
	}
	store, err := models.Open(path)
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
