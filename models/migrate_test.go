package models

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/outboundhq/outbound/internal/pgtest"
)

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || m.name == "" || m.up == nil {
			t.Errorf("migration #%d is {%d %q}, want version %d with a name and a function", i, m.version, m.name, i+1)
		}
	}
}

func appliedVersions(t *testing.T, s *Store) []int {
	t.Helper()
	var v []int
	if err := s.r.Raw("SELECT version FROM schema_migrations ORDER BY version").Scan(&v).Error; err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFirstReleaseDatabaseUpgradesInPlace opens a SQLite file the first
// release made (testdata/wave1.sql is the .dump of a database made by
// that release's `console init`, `allow add`, `settings set`, `token
// create` and `user add`, plus one refusal): every migration is applied
// once, nothing stored is lost, and a second open changes nothing.
func TestFirstReleaseDatabaseUpgradesInPlace(t *testing.T) {
	dump, err := os.ReadFile("testdata/wave1.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wave1.db")
	old, err := gorm.Open(sqlite.Open(path), gormConfig(engineSQLite))
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Exec(string(dump)).Error; err != nil {
		t.Fatalf("loading the first release's database: %v", err)
	}
	if err := closeGorm(old); err != nil {
		t.Fatal(err)
	}

	for round := 1; round <= 2; round++ {
		s, err := Open(path)
		if err != nil {
			t.Fatalf("open %d: %v", round, err)
		}
		ctx := testCtx(t)
		if got := appliedVersions(t, s); len(got) != LatestSchemaVersion() || got[len(got)-1] != LatestSchemaVersion() {
			t.Fatalf("open %d: applied %v, want 1…%d once each", round, got, LatestSchemaVersion())
		}
		if rev := mustRevision(t, s); rev != 2 {
			t.Errorf("open %d: revision %d, want the stored 2", round, rev)
		}
		if v, err := s.Version(ctx, SectionSettings); err != nil || v != 1 {
			t.Errorf("open %d: settings version %d, %v; want the stored 1", round, v, err)
		}
		rows, err := s.ListAllowlist(ctx)
		if err != nil || len(rows) != 1 || rows[0].Entry != "docs.example.com" || rows[0].Note != "the docs" {
			t.Errorf("open %d: allowlist %+v, %v", round, rows, err)
		}
		settings, err := s.Settings(ctx)
		if err != nil || settings["timeout"] != "20s" {
			t.Errorf("open %d: settings %v, %v; want timeout 20s", round, settings, err)
		}
		if u, err := s.UserByName(ctx, "ada"); err != nil || u.Role != RoleAdmin {
			t.Errorf("open %d: user ada %+v, %v", round, u, err)
		}
		if toks, err := s.ListTokens(ctx); err != nil || len(toks) != 1 || toks[0].Name != "triage" {
			t.Errorf("open %d: tokens %+v, %v", round, toks, err)
		}
		// Host search ignores case, on the old rows too.
		got, _, err := s.ListRefusals(ctx, RefusalQuery{Host: "INTRANET"})
		if err != nil || len(got) != 1 || got[0].RemedyValue != "intranet.corp:8080" {
			t.Errorf("open %d: host search found %+v, %v; want the old row", round, got, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSchemaNewerThanTheBinaryIsRefused: a database a newer release
// migrated is not opened (nor written to) by this one.
func TestSchemaNewerThanTheBinaryIsRefused(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		if err := s.w.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', ?)", LatestSchemaVersion()+1, time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}
		target := s.path
		if s.engine == enginePostgres {
			target = s.dsn
		}
		again, err := Open(target)
		var tooNew *SchemaTooNewError
		if !errors.As(err, &tooNew) || tooNew.Have != LatestSchemaVersion()+1 || tooNew.Know != LatestSchemaVersion() {
			if again != nil {
				again.Close()
			}
			t.Fatalf("Open = %v, want a SchemaTooNewError naming both versions", err)
		}
		if _, err := Migrate(testCtx(t), target); !errors.As(err, &tooNew) {
			t.Fatalf("Migrate = %v, want a SchemaTooNewError", err)
		}
	})
}

// TestReplicasStartingTogetherMigrateOnce: eight processes' worth of
// stores open one new database at the same moment; each migration is
// applied exactly once and every open succeeds.
func TestReplicasStartingTogetherMigrateOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		target := testTarget(t)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		stores := make(chan *Store, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Open(target)
				if err != nil {
					errs <- err
					return
				}
				stores <- s
			}()
		}
		wg.Wait()
		close(errs)
		close(stores)
		for err := range errs {
			t.Errorf("Open: %v", err)
		}
		var one *Store
		for s := range stores {
			one = s
			defer s.Close()
		}
		if one == nil {
			t.Fatal("no store opened")
		}
		got := appliedVersions(t, one)
		if len(got) != LatestSchemaVersion() {
			t.Fatalf("schema_migrations holds %v, want each of 1…%d once", got, LatestSchemaVersion())
		}
		if rev := mustRevision(t, one); rev != 0 {
			t.Fatalf("revision %d after eight opens, want 0", rev)
		}
	})
}

// TestPendingMigrationsChangesNothing: the status of a database at version
// 0 lists every migration and applies none; Migrate then applies them.
func TestPendingMigrationsThenMigrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbound.db")
	ctx := testCtx(t)
	st, err := PendingMigrations(ctx, path)
	if err != nil || st.Version != 0 || len(st.Pending) != LatestSchemaVersion() {
		t.Fatalf("PendingMigrations = %+v, %v; want version 0 and every migration pending", st, err)
	}
	if st, err = PendingMigrations(ctx, path); err != nil || st.Version != 0 {
		t.Fatalf("a second PendingMigrations = %+v, %v; the first must not have migrated", st, err)
	}
	st, err = Migrate(ctx, path)
	if err != nil || st.Version != LatestSchemaVersion() || len(st.Applied) != LatestSchemaVersion() {
		t.Fatalf("Migrate = %+v, %v", st, err)
	}
	st, err = Migrate(ctx, path)
	if err != nil || len(st.Applied) != 0 {
		t.Fatalf("a second Migrate = %+v, %v; want nothing applied", st, err)
	}
}

// TestOpenExistingRefusesAnEmptyPostgresDatabase: a command that must not
// create a database refuses a PostgreSQL database without the schema, and
// leaves it without one.
func TestOpenExistingRefusesAnEmptyPostgresDatabase(t *testing.T) {
	dsn := pgtest.Schema(t)
	s, err := OpenExisting(dsn)
	var ni *NotInitialisedError
	if !errors.As(err, &ni) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("OpenExisting = %v, want a NotInitialisedError", err)
	}
	st, err := PendingMigrations(testCtx(t), dsn)
	if err != nil || st.Version != 0 {
		t.Fatalf("after the refusal the schema is at %d (%v), want 0: untouched", st.Version, err)
	}
}

func TestDisplayNameHidesThePassword(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/outbound/console.db":                          "/var/lib/outbound/console.db",
		"postgres://app:s3cret@db.internal:5432/outbound":       "postgres://app:xxxxx@db.internal:5432/outbound",
		"postgresql://app@db/outbound?password=s3cret&x=1":      "postgresql://app@db/outbound?password=xxxxx&x=1",
		"POSTGRES://app:s3cret@db/outbound?sslmode=verify-full": "postgres://app:xxxxx@db/outbound?sslmode=verify-full",
	} {
		if got := DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := Open("postgres://app:s3cret@127.0.0.1:1/outbound?connect_timeout=1"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Open of an unreachable server = %v; want an error without the password", err)
	}
}

// TestOpenErrorsHideAQueryPassword: the password may be given in the
// URL's query (?password=), which DisplayName already hides; the errors
// of a URL that does not parse or a server that does not answer quoted
// it, to stderr and the journal.
func TestOpenErrorsHideAQueryPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://app@127.0.0.1:1/outbound?password=s3cret&sslmode=verfy-full",
		"postgres://app@127.0.0.1:1/outbound?password=s3cret&connect_timeout=x",
		"postgres://app@127.0.0.1:1/outbound?password=s%33cret&connect_timeout=1",
		"postgres://app:s%33cret@127.0.0.1:1/outbound?connect_timeout=x",
	} {
		_, err := Open(dsn)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", dsn)
		}
		if msg := err.Error(); strings.Contains(msg, "s3cret") || strings.Contains(msg, "s%33cret") {
			t.Errorf("Open(%q) = %q: the error shows the password", dsn, msg)
		}
	}
}

// behindAndLocked makes a SQLite database one schema version behind, as a
// process of a new release finds it while another migrates it, and holds
// its write lock from another connection; release gives the lock up.
func behindAndLocked(t *testing.T) (path string, release func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "outbound.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.w.Exec("DELETE FROM schema_migrations WHERE version = ?", LatestSchemaVersion()).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	holder, err := sql.Open("sqlite3", path+"?_txlock=immediate&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close() })
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("DELETE FROM settings WHERE key = 'no such key'"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback() }) }
	t.Cleanup(release)
	return path, release
}

// TestOpenWaitsForAnotherProcesssMigration: a process that finds the
// schema behind while another holds the write lock (migrating it: an
// index over a large log takes minutes) waits for the lock and then
// finds nothing left to do, rather than exiting with "database is
// locked" after one busy timeout (5 s), as it did.
func TestOpenWaitsForAnotherProcesssMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("holds the write lock past a busy timeout")
	}
	path, release := behindAndLocked(t)
	const held = 6 * time.Second // past the 5 s busy timeout
	go func() {
		time.Sleep(held)
		release()
	}()
	start := time.Now()
	s2, err := Open(path)
	if err != nil {
		t.Fatalf("Open while another process held the write lock for %v: %v", held, err)
	}
	defer s2.Close()
	if took := time.Since(start); took < held-500*time.Millisecond {
		t.Errorf("Open returned after %v, before the lock was released", took)
	}
	if v, err := schemaVersion(s2.w); err != nil || v != LatestSchemaVersion() {
		t.Fatalf("after the wait the schema is at version %d (%v), want %d", v, err, LatestSchemaVersion())
	}
}

// TestOpenStopsWaitingForAMigrationWhenItsContextEnds: the wait for
// another process's migration ends with the caller's context (a Ctrl-C,
// a SIGTERM), within one busy timeout, rather than after the whole
// migrationLockWait.
func TestOpenStopsWaitingForAMigrationWhenItsContextEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("holds the write lock for a busy timeout")
	}
	path, _ := behindAndLocked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	s2, err := OpenContext(ctx, path)
	if err == nil {
		s2.Close()
		t.Fatal("Open succeeded while the write lock was held")
	}
	if took := time.Since(start); took > 8*time.Second || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open gave up after %v with %v; want the context's end within one busy timeout", took, err)
	}
}
