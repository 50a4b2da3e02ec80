// Package pgtest gives a test its own PostgreSQL schema, and decides
// whether a test that needs PostgreSQL runs, skips or fails, the same way
// in every package.
//
// A developer without PostgreSQL can still run `go test ./...`: those tests
// skip, naming the variable to set. The project's test command starts a
// throwaway cluster (scripts/pg-test-cluster.sh), sets DSNEnv to it and sets
// RequiredEnv, so there a missing database fails instead: CI cannot go green
// without the PostgreSQL half of the suite.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DSNEnv holds the URL of a PostgreSQL database the tests may create
// schemas in (scripts/test.sh sets it).
const DSNEnv = "OUTBOUND_TEST_POSTGRES"

// RequiredEnv turns a missing DSNEnv into a failure (scripts/test.sh sets it).
const RequiredEnv = "OUTBOUND_POSTGRES_REQUIRED"

// DSN returns the test database's URL, or skips (fails, under RequiredEnv)
// t when there is none.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(DSNEnv)
	if dsn == "" {
		if os.Getenv(RequiredEnv) != "" {
			t.Fatalf("%s is empty but %s is set: the PostgreSQL tests must run; start a cluster with scripts/pg-test-cluster.sh", DSNEnv, RequiredEnv)
		}
		t.Skipf("PostgreSQL tests are skipped: set %s to a postgres:// URL (scripts/pg-test-cluster.sh starts one; set %s=1 to make this a failure)", DSNEnv, RequiredEnv)
	}
	return dsn
}

// Schema creates a schema of its own for t, dropped when t ends, and
// returns a URL whose connections use it (search_path), so tests running
// in parallel never see each other's tables.
func Schema(t testing.TB) string {
	t.Helper()
	dsn := DSN(t)
	sharedExtensions.Do(func() { sharedExtensionsErr = keepExtensionsShared(dsn) })
	if sharedExtensionsErr != nil {
		t.Fatalf("putting pg_trgm in schema public of %s: %v", DSNEnv, sharedExtensionsErr)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "t_" + hex.EncodeToString(b[:])
	exec(t, dsn, "CREATE SCHEMA "+name)
	t.Cleanup(func() { dropSchema(t, dsn, name) })
	return WithSearchPath(t, dsn, name)
}

// WithSearchPath returns dsn with its connections' search_path set to
// schema: a store opened on it keeps its tables there.
func WithSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: %v", DSNEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// An extension lives in one schema of the database, the one it was first
// created in: without this, the first test to run the migrations put
// pg_trgm in its own schema, and when that test ended, dropping its schema
// dropped the extension and, with it, the trigram indexes of every other
// test's schema, live tests included, which then searched without them.
// So the extension is kept in public, where no test drops it (moved there
// if an earlier run left it in a test's schema).
var (
	sharedExtensions    sync.Once
	sharedExtensionsErr error
)

func keepExtensionsShared(dsn string) error {
	const stmt = `DO $$ BEGIN
		CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
		IF (SELECT extnamespace FROM pg_extension WHERE extname = 'pg_trgm') <> 'public'::regnamespace THEN
			ALTER EXTENSION pg_trgm SET SCHEMA public;
		END IF;
	EXCEPTION WHEN unique_violation THEN NULL; -- another test process created it just now
	END $$`
	var err error
	for range 3 {
		if err = tryExec(dsn, stmt); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// dropSchema drops a test's schema, trying again when PostgreSQL picks the
// drop as a deadlock victim: dropping every table of a schema takes many
// locks, and a connection the test's store still winds down (or
// autovacuum) can hold one of them the other way round.
func dropSchema(t testing.TB, dsn, name string) {
	t.Helper()
	stmt := "DROP SCHEMA " + name + " CASCADE"
	var err error
	for attempt := range 5 {
		if err = tryExec(dsn, stmt); err == nil {
			return
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "40P01" {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	t.Fatalf("%s: %v", stmt, err)
}

// tryExec runs one statement on the database dsn names.
func tryExec(dsn, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", DSNEnv, err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, stmt)
	return err
}

// Exec runs one statement on the database dsn names.
func Exec(t testing.TB, dsn, stmt string) { t.Helper(); exec(t, dsn, stmt) }

func exec(t testing.TB, dsn, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to %s: %v", DSNEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
