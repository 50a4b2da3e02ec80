package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/outboundhq/outbound/models"
)

// Initialized is what Init found or made.
type Initialized struct {
	Path string
	// Created is false when a database was already there: Init then
	// changed nothing, not even a missing key file.
	Created bool
	// KeyFile is the secret key file beside the new database, or "" when
	// CONSOLE_SECRET_KEY holds the key (KeyFromEnv).
	KeyFile    string
	KeyFromEnv bool
}

// Init creates the database at path and the key that seals integration
// secrets, as the console's first start does, so that every other command
// (which refuses a missing database) can then run. A database already
// there is left exactly as it is. A CONSOLE_SECRET_KEY that is not a key
// is refused before anything is created.
func Init(path string, getenv func(string) string) (Initialized, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	done := Initialized{Path: path, KeyFromEnv: strings.TrimSpace(getenv(secretKeyEnv)) != "" || strings.TrimSpace(getenv(secretKeyFileEnv)) != ""}
	if models.IsPostgres(path) {
		return initPostgres(path, getenv, done)
	}
	if path != "" { // models.Open explains an empty path
		st, err := os.Stat(path)
		switch {
		case err == nil && st.IsDir():
			return done, &OpenError{Path: path, Err: errors.New("it is a directory; give a file name, e.g. " + path + "/console.db")}
		case err == nil:
			return done, nil
		case !errors.Is(err, fs.ErrNotExist):
			return done, &OpenError{Path: path, Err: err}
		}
	}
	if done.KeyFromEnv {
		if _, err := OpenSecretBox(path, getenv); err != nil {
			return done, err
		}
	}
	store, err := OpenStore(path, MayCreate)
	if err != nil {
		return done, err
	}
	if err := store.Close(); err != nil {
		return done, fmt.Errorf("cannot close the new database %s: %w", path, err)
	}
	done.Created = true
	if !done.KeyFromEnv {
		if _, err := OpenSecretBox(path, getenv); err != nil {
			return done, err
		}
		done.KeyFile = KeyPath(path)
	}
	return done, nil
}

// initPostgres is Init for a PostgreSQL database, which the database's
// administrator creates (CREATE DATABASE): Init creates the schema in it.
// The key must be given (CONSOLE_SECRET_KEY or CONSOLE_SECRET_KEY_FILE),
// since every replica needs the same one.
func initPostgres(dsn string, getenv func(string) string, done Initialized) (Initialized, error) {
	done.Path = models.DisplayName(dsn)
	if _, err := OpenSecretBox(dsn, getenv); err != nil {
		return done, err
	}
	ctx := context.Background()
	st, err := models.Migrate(ctx, dsn)
	if err != nil {
		return done, &OpenError{Path: done.Path, Err: err}
	}
	done.Created = len(st.Applied) > 0 && strings.HasPrefix(st.Applied[0], "1:")
	return done, nil
}
