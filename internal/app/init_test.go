package app

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestInitCreatesTheDatabaseAndKeyOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "console.db")
	done, err := Init(db, noEnv)
	if err != nil || !done.Created || done.KeyFile != KeyPath(db) || done.KeyFromEnv {
		t.Fatalf("Init: %+v %v", done, err)
	}
	key, err := os.ReadFile(KeyPath(db))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(db, MustExist); err != nil {
		t.Fatalf("the new database does not open: %v", err)
	}
	again, err := Init(db, noEnv)
	if err != nil || again.Created || again.KeyFile != "" {
		t.Fatalf("Init again: %+v %v", again, err)
	}
	if now, _ := os.ReadFile(KeyPath(db)); string(now) != string(key) {
		t.Fatal("Init again replaced the key")
	}
}

func TestInitRefusesABadEnvironmentKeyBeforeCreating(t *testing.T) {
	db := filepath.Join(t.TempDir(), "console.db")
	_, err := Init(db, func(string) string { return "short" })
	if err == nil {
		t.Fatal("a bad CONSOLE_SECRET_KEY was accepted")
	}
	for _, p := range []string{db, KeyPath(db)} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s was created: %v", p, err)
		}
	}
}

func TestMissingDatabaseErrorNamesTheAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := OpenStore("console.db", MustExist)
	var missing *MissingDatabaseError
	if !errors.As(err, &missing) || missing.Error() != "there is no database at console.db ("+filepath.Join(dir, "console.db")+")" {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "console.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("OpenStore created the database")
	}
}
