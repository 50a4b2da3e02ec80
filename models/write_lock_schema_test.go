package models

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboundhq/outbound/internal/pgtest"
)

// The write lock is the store's schema's, not the whole database's: a
// write held open in one schema holds up that schema's writers (the "one
// writer at a time" every check-then-write relies on) and no other
// schema's. Found when CI's notification test saw a change reach a
// replica after 1.16 s: every test's schema shared one lock.
func TestTheWriteLockIsTheSchemas(t *testing.T) {
	busy, other := pgtest.Schema(t), pgtest.Schema(t)
	stores := map[string]*Store{}
	for name, dsn := range map[string]string{"busy": busy, "other": other} {
		s, err := Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[name] = s
	}
	ctx := context.Background()
	// In schema public the key is the one every release took, so a
	// replica of an older release there still excludes this one.
	inPublic, err := pgx.Connect(ctx, pgtest.WithSearchPath(t, pgtest.DSN(t), "public"))
	if err != nil {
		t.Fatal(err)
	}
	defer inPublic.Close(ctx)
	var public int64
	if err := inPublic.QueryRow(ctx, "SELECT "+schemaWriteLockKey, writeLockKey).Scan(&public); err != nil {
		t.Fatal(err)
	}
	if public != writeLockKey {
		t.Fatalf("schema public's write lock key is %#x, want %#x, the key of every earlier release", public, writeLockKey)
	}
	// Another replica of the busy schema holds its write lock.
	holder, err := pgx.Connect(ctx, busy)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, takeWriteLock, writeLockKey); err != nil {
		t.Fatal(err)
	}

	write := func(s *Store, host string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: host}})
			done <- err
		}()
		return done
	}
	select {
	case err := <-write(stores["other"], "other.example.com"):
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second): // the lock is held for as long as this waits
		t.Fatal("a write in another schema waited for this schema's write lock")
	}
	blocked := write(stores["busy"], "busy.example.com")
	select {
	case err := <-blocked:
		t.Fatalf("a write in the busy schema went ahead while its lock was held (err %v): two writers at once", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-blocked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the busy schema's write did not go ahead once the lock was let go")
	}
}
