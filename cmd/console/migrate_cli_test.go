package main

import (
	"strings"
	"testing"
)

// TestMigrateCommand: console migrate refuses a database that is not
// there (and creates none), says when there is nothing to do, and with
// --status lists what is pending without applying it.
func TestMigrateCommand(t *testing.T) {
	db := tempDB(t)
	if r := runCLI(t, "migrate", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "console init --db") {
		t.Fatalf("migrate on a missing database: %+v; want exit 2 naming console init", r)
	}
	if r := runCLI(t, "migrate", "--status", "--db", db); r.code != 2 {
		t.Fatalf("migrate --status on a missing database: %+v; want exit 2", r)
	}
	if r := runCLI(t, "init", "--db", db); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "migrate", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to do") {
		t.Fatalf("migrate on a current database: %+v", r)
	}
	r = runCLI(t, "migrate", "--status", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "Nothing is pending") {
		t.Fatalf("migrate --status on a current database: %+v", r)
	}
	if r := runCLI(t, "migrate", "--db", db, "extra"); r.code != 2 {
		t.Fatalf("migrate with an argument: %+v; want exit 2", r)
	}
}
