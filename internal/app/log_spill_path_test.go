package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/internal/pgtest"
	"github.com/outboundhq/outbound/models"
)

// TestSpillPathNamesTheDatabaseNotTheURL: a PostgreSQL URL's spill file
// is named after the database it names, so a rotated password or a new
// sslmode finds the rows spilled before; another database or schema has
// a file of its own.
func TestSpillPathNamesTheDatabaseNotTheURL(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	base := LogSpillPath("postgres://app:old@db.internal:5432/outbound?sslmode=require&search_path=t1", "refusals")
	for _, same := range []string{
		"postgres://app:new@db.internal:5432/outbound?sslmode=verify-full&search_path=t1",
		"postgresql://app@DB.internal:5432/outbound?search_path=t1&connect_timeout=5&password=x",
		" postgres://app:old@db.internal:5432/outbound?search_path=t1&application_name=replica-2",
	} {
		if got := LogSpillPath(same, "refusals"); got != base {
			t.Errorf("%q spills to %s, want %s (the same database)", same, got, base)
		}
	}
	for _, other := range []string{
		"postgres://app@db.internal:5432/other?search_path=t1",
		"postgres://app@db.internal:5432/outbound?search_path=t2",
		"postgres://app@db2.internal:5432/outbound?search_path=t1",
		"postgres://bob@db.internal:5432/outbound?search_path=t1",
	} {
		if got := LogSpillPath(other, "refusals"); got == base {
			t.Errorf("%q spills to the same file as another database", other)
		}
	}
	if LogSpillPath("/var/lib/outbound/console.db", "refusals") != "/var/lib/outbound/console.db.refusals.spill" {
		t.Error("a SQLite database's spill file moved")
	}
}

// TestAnEarlierReleasesSpillIsReplayed: rows an earlier release spilled
// under the whole URL's hash are moved to the new name when the writers
// start, and written.
func TestAnEarlierReleasesSpillIsReplayed(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	target := pgtest.Schema(t)
	old := legacySpillPath(target, "refusals")
	if old == LogSpillPath(target, "refusals") {
		t.Fatal("the legacy and the new spill file have the same name")
	}
	if err := os.MkdirAll(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("{\"Host\":\"left.example\",\"URL\":\"http://left.example/\"}\n{\"Host\":\"behind.example\",\"URL\":\"http://behind.example/\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := Open(ctx, target, Options{Resolver: guardtest.NewResolver(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv: envOf(map[string]string{"CONSOLE_SECRET_KEY": testKey})})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := models.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, _, err := s.ListRefusals(ctx, models.RefusalQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d refusals in the database, want the 2 the earlier release spilled", len(rows))
	}
	if st, err := os.Stat(old); err != nil || st.Size() != 0 {
		t.Errorf("the earlier release's spill file after the start: %v, %v; want it emptied", st, err)
	}
}
