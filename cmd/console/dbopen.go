package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

const mustExist = app.MustExist

// openStore opens the database at path through the application layer and
// words its errors for the command line: a missing database is a usage
// error (the fix is in --db, or in console init).
func openStore(path string, mode app.DBMode) (*models.Store, error) {
	store, err := app.OpenStore(path, mode)
	return store, cliOpenError(err)
}

// cliOpenError turns the application layer's open errors into the command
// line's: a missing database is a usage error. Only serve and init create
// one; every other command refuses a path with nothing there, since a
// mistyped --db would otherwise run an agent under a new database's
// PUBLIC WEB or save a change where nothing reads it.
func cliOpenError(err error) error {
	var missing *app.MissingDatabaseError
	var oe *app.OpenError
	switch {
	case errors.As(err, &missing):
		return usagef("%s; check --db or CONSOLE_DB, or create it with `console init --db %s` (or `console serve`, which creates it on its first start)", missing.Error(), missing.Path)
	case errors.As(err, &oe):
		detail := strings.TrimPrefix(cliText(oe.Err.Error()), fmt.Sprintf("open %q: ", oe.Path))
		return fmt.Errorf("cannot open the database %s: %s", oe.Path, detail)
	}
	return err
}

// cliText removes the "models: " prefixes the storage package puts on its
// errors. They name a Go package, which means nothing to someone at a
// shell; the rest of each message already says what went wrong.
func cliText(msg string) string { return strings.ReplaceAll(msg, "models: ", "") }

// openApp opens the application layer with the command line's wording of
// its open errors.
func openApp(ctx context.Context, path string, opts app.Options) (*app.App, error) {
	a, err := app.Open(ctx, path, opts)
	return a, cliOpenError(err)
}
