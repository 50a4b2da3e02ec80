package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/internal/pgtest"
)

const testKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestPostgresSecretKeyNeverComesFromTheDatabase: with a PostgreSQL
// database the key is given (variable or file) or the process refuses to
// start; no key file is made beside anything, and the URL's password is in
// no message.
func TestPostgresSecretKeyNeverComesFromTheDatabase(t *testing.T) {
	dsn := "postgres://app:s3cret@db.internal/outbound"
	_, err := OpenSecretBox(dsn, envOf(nil))
	var nokey *NoSecretKeyError
	if !errors.As(err, &nokey) || !strings.Contains(err.Error(), "CONSOLE_SECRET_KEY_FILE") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("no key: %v; want a NoSecretKeyError naming CONSOLE_SECRET_KEY_FILE", err)
	}
	if _, err := OpenSecretBox(dsn, envOf(map[string]string{"CONSOLE_SECRET_KEY": testKey})); err != nil {
		t.Fatalf("key in the variable: %v", err)
	}
	file := filepath.Join(t.TempDir(), "secret.key")
	if _, err := OpenSecretBox(dsn, envOf(map[string]string{"CONSOLE_SECRET_KEY_FILE": file})); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing key file: %v; want an error saying it does not exist (and not a new key)", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a missing key file was created: the other replicas would not have it")
	}
	if err := os.WriteFile(file, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	box, err := OpenSecretBox(dsn, envOf(map[string]string{"CONSOLE_SECRET_KEY_FILE": file}))
	if err != nil {
		t.Fatalf("key in a file: %v", err)
	}
	// The same key from the file and from the variable: one seals, the
	// other opens.
	other, _ := OpenSecretBox(dsn, envOf(map[string]string{"CONSOLE_SECRET_KEY": testKey}))
	sealed, err := box.Seal("Bearer xyz")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := other.Open(sealed); err != nil || got != "Bearer xyz" {
		t.Fatalf("a secret sealed with the file's key opens as %q, %v with the variable's", got, err)
	}
}

// TestMustExistRefusesAnEmptyPostgresDatabase: the proxy, mcp and every
// command but serve and init refuse a PostgreSQL database without the
// schema, as they refuse a missing SQLite file.
func TestMustExistRefusesAnEmptyPostgresDatabase(t *testing.T) {
	dsn := pgtest.Schema(t)
	_, err := OpenStore(dsn, MustExist)
	var missing *MissingDatabaseError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "holds no Outbound schema") {
		t.Fatalf("OpenStore(MustExist) = %v; want a MissingDatabaseError", err)
	}
	s, err := OpenStore(dsn, MayCreate)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenStore(dsn, MustExist)
	if err != nil {
		t.Fatalf("after creation, OpenStore(MustExist) = %v", err)
	}
	s.Close()
}
