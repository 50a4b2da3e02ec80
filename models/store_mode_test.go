package models

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDatabaseFilesAreOwnerOnly: the database, its WAL and its shared
// memory file hold password hashes, tokens' hashes and the refusal log,
// so a new store makes all three readable by its owner only, whatever the
// umask says.
func TestDatabaseFilesAreOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, which would give 0644
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "console.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateUser(testCtx(t), User{Name: "ada", PasswordHash: "x", Role: RoleAdmin}); err != nil { // a write, so the WAL holds a frame
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(f), st.Mode().Perm())
		}
	}
}
