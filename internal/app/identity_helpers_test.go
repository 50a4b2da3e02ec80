package app

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the store's driver, for the audit-failure trigger
	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/models"
)

// identityApp is an App over a fresh database, hashing at bcrypt's lowest
// cost, and the database's path.
func identityApp(t *testing.T) (*App, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "console.db")
	store, err := models.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a := ForStore(store, StoreOptions{PasswordCost: bcrypt.MinCost})
	t.Cleanup(func() { a.Close() })
	return a, path
}

// auditTrail lists the audit records, oldest first, as "action target".
func auditTrail(t *testing.T, a *App) []string {
	t.Helper()
	rows, _, err := a.Store().ListAudit(context.Background(), 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[len(rows)-1-i] = r.Action + " " + r.Target
	}
	return out
}

// failAudits makes every later audit insert fail, through a second
// connection to the same file, so each change must roll back.
func failAudits(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TRIGGER audit_fails BEFORE INSERT ON audits BEGIN SELECT RAISE(ABORT, 'audit disk full'); END"); err != nil {
		t.Fatal(err)
	}
}
