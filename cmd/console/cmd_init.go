package main

import (
	"context"
	"fmt"

	"github.com/outboundhq/outbound/internal/app"
)

// runInit creates the database (and its secret key file) that every
// command but serve requires, for a setup done from the shell before the
// console first starts. Run again, it changes nothing, so a provisioning
// script may run it every time.
func runInit(ctx context.Context, e env, args []string) error {
	var db string
	fs := newFlags("init", &db)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("init takes no arguments; name the file with --db PATH: console init --db /var/lib/outbound/console.db")
	}
	done, err := app.Init(db, nil)
	if err != nil {
		return cliOpenError(err)
	}
	if !done.Created {
		fmt.Fprintf(e.stdout, "The database %s already exists; nothing changed.\n", done.Path)
		return nil
	}
	fmt.Fprintf(e.stdout, "created the database %s\n", done.Path)
	if done.KeyFromEnv {
		fmt.Fprintln(e.stdout, "integration secrets are sealed with the key in CONSOLE_SECRET_KEY (or the file CONSOLE_SECRET_KEY_FILE names); set it for every command and replica on this database")
	} else {
		fmt.Fprintf(e.stdout, "created the secret key file %s (it seals integration secrets; back it up with the database, and keep it private)\n", done.KeyFile)
	}
	fmt.Fprintf(e.stdout, "\nNext, create the first admin: printf '%%s\\n' \"$ADMIN_PASSWORD\" | console user add --role admin NAME --db %s\n", done.Path)
	fmt.Fprintf(e.stdout, "or start `console serve --db %s` and open the setup link it prints.\n", done.Path)
	return nil
}
