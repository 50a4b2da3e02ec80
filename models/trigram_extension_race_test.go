package models

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/outboundhq/outbound/internal/pgtest"
)

// Two deployments in two schemas of one database migrate at once, and
// neither finds pg_trgm: the second's CREATE EXTENSION waits for the
// first's and then fails on its row. The extension is there all the
// same, so the migration goes on with its trigram indexes (found in
// review once each schema's write lock became its own). A database of
// its own, so that the suite's shared pg_trgm is not touched.
func TestCreatingPgTrgmTwiceAtOnceIsNoFailure(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	const db = "outbound_ext_race"
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Skipf("cannot create a database of its own for the test: %v", err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	target := u.String()

	first, err := pgx.Connect(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close(ctx)
	tx, err := first.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "CREATE EXTENSION pg_trgm"); err != nil {
		t.Fatal(err)
	}

	cfg, err := pgx.ParseConfig(target)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB := stdlib.OpenDB(*cfg)
	defer sqlDB.Close()
	second, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- second.Transaction(func(tx *gorm.DB) error { return createTrigramExtension(tx) })
	}()
	select {
	case err := <-done:
		t.Fatalf("the second CREATE did not wait for the first: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("creating pg_trgm while another transaction created it: %v; want no failure", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the second CREATE did not end once the first committed")
	}
}
