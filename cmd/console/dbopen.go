package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/outboundhq/outbound/models"
)

// dbMode says whether a command may create the database. SQLite creates a
// missing file on open, so a mistyped --db would otherwise answer a
// read-only command from a brand new, empty database (PUBLIC WEB, no
// tokens, no refusals) and look like everything had been lost.
type dbMode int

const (
	// mustExist is for commands that only read the configuration or log.
	mustExist dbMode = iota
	// mayCreate is for commands that change things or run the console,
	// where a first run legitimately starts a new database.
	mayCreate
)

// missingDBError is the refusal of a read-only command to open a database
// that is not there. It is a usage error: the fix is in --db.
func missingDBError(path string) error {
	return usagef("there is no database at %s; check --db or CONSOLE_DB (the console creates it on its first `console serve` or change)", path)
}

// openStore opens the database at path, refusing a missing file when mode
// is mustExist, and words the store's errors for the command line.
func openStore(path string, mode dbMode) (*models.Store, error) {
	if err := checkDBExists(path, mode); err != nil {
		return nil, err
	}
	store, err := models.Open(path)
	if err != nil {
		detail := strings.TrimPrefix(cliText(err.Error()), fmt.Sprintf("open %q: ", path))
		return nil, fmt.Errorf("cannot open the database %s: %s", path, detail)
	}
	return store, nil
}

func checkDBExists(path string, mode dbMode) error {
	if mode == mayCreate || path == "" {
		return nil // models.Open explains an empty path
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return missingDBError(path)
	}
	return nil
}

// cliText removes the "models: " prefixes the storage package puts on its
// errors. They name a Go package, which means nothing to someone at a
// shell; the rest of each message already says what went wrong.
func cliText(msg string) string { return strings.ReplaceAll(msg, "models: ", "") }
