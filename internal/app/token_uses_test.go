package app

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// Finding 2: verifying a token wrote its last use on the writer
// connection, so with the write lock held elsewhere every agent request
// waited the 5 s busy timeout. Now a verification never writes: uses are
// written from the background.
func TestVerifyTokenNeverWaitsForTheWriteLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "console.db")
	a, err := Open(ctx, path, Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	secret, err := a.CreateToken(ctx, "ada", "bot")
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		toks, err := a.ListTokens(ctx)
		if err != nil || len(toks) != 1 {
			t.Fatalf("ListTokens = %+v, %v", toks, err)
		}
		return toks[0].LastUsedAt
	}

	// Another process holds the write lock (a VACUUM, a long purge).
	other, err := sql.Open("sqlite3", path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 20 {
		if agent, err := a.VerifyToken(ctx, secret); err != nil || agent != "bot" {
			t.Fatalf("VerifyToken = %q, %v", agent, err)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("20 verifications took %v with the write lock held elsewhere; they must not wait for it", d)
	}
	// A background round during the stall fails and keeps the use.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	a.flushTokenUses(short)
	cancel()
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got != nil {
		t.Fatalf("last use %v was written during the stall", got)
	}
	a.flushTokenUses(ctx)
	if got := lastUsed(); got == nil || time.Since(*got) > time.Minute {
		t.Fatalf("after the stall the last use is %v, want it written", got)
	}
}
