package models

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/pgtest"
)

// openTestStore opens a fresh database and closes it when the test ends: a
// SQLite file in the test's temporary directory, or inside eachEngine's
// postgres half a PostgreSQL schema of the test's own.
// testTarget is a new database for t: a file, or a schema of the test
// cluster in eachEngine's postgres half.
func testTarget(t testing.TB) string {
	t.Helper()
	if testOnPostgres(t) {
		return pgtest.Schema(t)
	}
	return filepath.Join(t.TempDir(), "outbound.db")
}

func openTestStore(t testing.TB) *Store {
	t.Helper()
	target := testTarget(t)
	s, err := Open(target)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// testCtx bounds every test so a deadlock fails instead of hanging the run.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustRevision(t testing.TB, s *Store) int64 {
	t.Helper()
	rev, err := s.Revision(testCtx(t))
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	return rev
}

func countRefusals(t testing.TB, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.r.Model(&Refusal{}).Count(&n).Error; err != nil {
		t.Fatalf("counting refusals: %v", err)
	}
	return n
}

func contextWithCancel(t testing.TB) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	return ctx, cancel
}

// forgetMigrations makes s look like a database of the first release,
// which had no schema_migrations table (nor the tables of later
// migrations): the next Open upgrades it as it would upgrade that file.
func forgetMigrations(t testing.TB, s *Store) {
	t.Helper()
	for _, stmt := range []string{"DROP TABLE schema_migrations", "DROP TABLE setup_links", "DROP TABLE signin_failures"} {
		if err := s.w.Exec(stmt).Error; err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// eachEngine runs body once on each engine, as subtests named sqlite and
// postgres; openTestStore, called inside, opens a store of the subtest's
// engine. The postgres half skips when no test database is configured
// (see internal/pgtest).
func eachEngine(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	t.Run("sqlite", body)
	t.Run("postgres", body)
}

// testOnPostgres says whether t is (inside) eachEngine's postgres half.
func testOnPostgres(t testing.TB) bool {
	for _, part := range strings.Split(t.Name(), "/") {
		if part == "postgres" {
			return true
		}
	}
	return false
}

// failAuditWrites makes every insert into audits fail, as a full disk
// would, until allowAuditWrites. It returns nil so it reads like the
// statement it stands for.
func failAuditWrites(t testing.TB, s *Store) error {
	t.Helper()
	stmts := []string{"CREATE TRIGGER audit_fails BEFORE INSERT ON audits BEGIN SELECT RAISE(ABORT, 'audit disk full'); END"}
	if s.engine == enginePostgres {
		stmts = []string{
			"CREATE OR REPLACE FUNCTION audit_fails() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit disk full'; END $$",
			"CREATE TRIGGER audit_fails BEFORE INSERT ON audits FOR EACH ROW EXECUTE FUNCTION audit_fails()",
		}
	}
	for _, stmt := range stmts {
		if err := s.w.Exec(stmt).Error; err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return nil
}

// allowAuditWrites undoes failAuditWrites.
func allowAuditWrites(t testing.TB, s *Store) error {
	t.Helper()
	stmt := "DROP TRIGGER audit_fails"
	if s.engine == enginePostgres {
		stmt += " ON audits"
	}
	if err := s.w.Exec(stmt).Error; err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	return nil
}

// pagedIDs lists the IDs of every row q selects by following the page
// cursors from the newest page on, as the console does.
func pagedIDs(t *testing.T, s *Store, q RefusalQuery) []int64 {
	t.Helper()
	var ids []int64
	for {
		page, next, err := s.ListRefusals(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			ids = append(ids, r.ID)
		}
		if next == 0 {
			return ids
		}
		q.BeforeID = next
	}
}

// refusedHostsForTest reads the refused-host list, in host order.
func (s *Store) refusedHostsForTest(t *testing.T) []string {
	t.Helper()
	var hosts []string
	if err := s.r.Raw("SELECT host FROM refusal_hosts ORDER BY host").Scan(&hosts).Error; err != nil {
		t.Fatal(err)
	}
	return hosts
}
