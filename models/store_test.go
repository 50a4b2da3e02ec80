package models

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenRejectsBadPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	notSQLite := filepath.Join(dir, "not-sqlite.db")
	if err := os.WriteFile(notSQLite, []byte(strings.Repeat("this is not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want []string // substrings the error must contain
	}{
		{"empty", "", []string{"empty database path"}},
		{"memory", ":memory:", []string{`":memory:"`, "real file"}},
		{"uri", "file:x.db?mode=memory", []string{"plain file paths"}},
		{"question mark", filepath.Join(dir, "a?b.db"), []string{"contains '?'"}},
		{"missing directory", filepath.Join(dir, "nope", "x.db"), []string{filepath.Join(dir, "nope"), "does not exist", "mkdir -p"}},
		{"parent is a file", filepath.Join(file, "x.db"), []string{"is not a directory"}},
		{"path is a directory", dir, []string{"is a directory", "outbound.db"}},
		{"not a database", notSQLite, []string{notSQLite}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.path)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded, want error", tt.path)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open(%q) error %q does not mention %q", tt.path, err, w)
				}
			}
		})
	}
}

func TestOpenConfiguresSQLite(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	tests := []struct {
		pool   string
		pragma string
		want   string
	}{
		{"writer", "journal_mode", "wal"},
		{"writer", "busy_timeout", "5000"},
		{"writer", "foreign_keys", "1"},
		{"writer", "synchronous", "1"}, // NORMAL
		{"reader", "busy_timeout", "5000"},
		{"reader", "query_only", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.pool+"/"+tt.pragma, func(t *testing.T) {
			db := s.w
			if tt.pool == "reader" {
				db = s.r
			}
			var got string
			if err := db.WithContext(ctx).Raw("PRAGMA " + tt.pragma).Scan(&got).Error; err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("PRAGMA %s on %s = %q, want %q", tt.pragma, tt.pool, got, tt.want)
			}
		})
	}
	t.Run("writer has one connection", func(t *testing.T) {
		sqlDB, err := s.w.DB()
		if err != nil {
			t.Fatal(err)
		}
		if got := sqlDB.Stats().MaxOpenConnections; got != 1 {
			t.Errorf("writer MaxOpenConnections = %d, want 1", got)
		}
	})
	t.Run("reader refuses writes", func(t *testing.T) {
		err := s.r.WithContext(ctx).Exec("INSERT INTO settings (key, value, updated_at) VALUES ('x', 'y', '2024-01-01')").Error
		if err == nil {
			t.Fatal("insert through the read pool succeeded; query_only is not in effect")
		}
	})
}

func TestOpenTwiceAndCloseTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbound.db")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatalf("second Open of the same file (migration must be idempotent): %v", err)
	}
	if a.Path() != path || b.Path() != path {
		t.Errorf("Path() = %q, %q; want %q", a.Path(), b.Path(), path)
	}
	if err := a.Close(); err != nil {
		t.Errorf("first Close: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close must be a no-op, got %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close of second store: %v", err)
	}
}
