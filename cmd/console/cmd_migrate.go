package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

const migrateUsage = "migrate [--status]"

// runMigrate brings the database's schema to the version this binary
// knows, or with --status says where it stands and changes nothing. Every
// process migrates on start anyway (once, under the database's lock); the
// command is for an upgrade done on purpose before new replicas roll out,
// and for a check in a deployment script.
func runMigrate(ctx context.Context, e env, args []string) error {
	var db string
	fs := newFlags("migrate", &db)
	status := fs.Bool("status", false, "say which migrations are applied and pending; change nothing")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("migrate takes no arguments (%s): console migrate [--status] --db PATH", strings.Join(rest, " "))
	}
	name := models.DisplayName(db)
	if !models.IsPostgres(db) && db != "" {
		// A mistyped path must not become a new, migrated database. (A
		// PostgreSQL database is created by its administrator; migrate
		// creates the schema in it.)
		if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
			return cliOpenError(&app.MissingDatabaseError{Path: db})
		}
	}
	var st models.MigrationStatus
	if *status {
		st, err = models.PendingMigrations(ctx, db)
	} else {
		st, err = models.Migrate(ctx, db)
	}
	var tooNew *models.SchemaTooNewError
	switch {
	case errors.As(err, &tooNew):
		return fmt.Errorf("the database %s is at schema version %d, newer than this binary knows (%d): a newer release migrated it; install that release (on every replica) rather than run this one", name, tooNew.Have, tooNew.Know)
	case err != nil:
		return fmt.Errorf("cannot migrate the database %s: %s", name, cliText(err.Error()))
	}
	if *status {
		fmt.Fprintf(e.stdout, "The database %s is at schema version %d; this binary knows %d.\n", name, st.Version, st.Latest)
		if len(st.Pending) == 0 {
			fmt.Fprintln(e.stdout, "Nothing is pending.")
			return nil
		}
		fmt.Fprintln(e.stdout, "Pending (console migrate applies them; so does the next start of any command):")
		for _, p := range st.Pending {
			fmt.Fprintf(e.stdout, "  %s\n", p)
		}
		return nil
	}
	if len(st.Applied) == 0 {
		fmt.Fprintf(e.stdout, "The database %s is at schema version %d, the newest this binary knows; nothing to do.\n", name, st.Version)
		return nil
	}
	fmt.Fprintf(e.stdout, "Migrated the database %s to schema version %d:\n", name, st.Version)
	for _, a := range st.Applied {
		fmt.Fprintf(e.stdout, "  applied %s\n", a)
	}
	return nil
}
