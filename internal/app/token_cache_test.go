package app

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/tools"
)

// A verified token is trusted for tokenCacheFor without a query; revoked
// here it is refused at once, revoked by another process (straight in
// the store) within the bound.
func TestVerifyTokenCachesWithinTheBound(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	secret, err := a.CreateToken(ctx, "ada", "bot")
	if err != nil {
		t.Fatal(err)
	}
	other, err := a.CreateToken(ctx, "ada", "other-bot")
	if err != nil {
		t.Fatal(err)
	}
	if agent, err := a.VerifyToken(ctx, secret); err != nil || agent != "bot" {
		t.Fatalf("VerifyToken = %q, %v", agent, err)
	}
	if _, err := a.VerifyToken(ctx, other); err != nil {
		t.Fatal(err)
	}

	// Revoked by another process: refused once the bound has passed.
	if _, err := a.Store().RevokeToken(ctx, "other-bot"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(tokenCacheFor + 20*time.Millisecond)
	if _, err := a.VerifyToken(ctx, other); !errors.Is(err, tools.ErrBadToken) {
		t.Fatalf("a token revoked elsewhere still verified %v after: %v", tokenCacheFor+20*time.Millisecond, err)
	}

	// Revoked here: refused from the next request.
	if _, err := a.VerifyToken(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeToken(ctx, "ada", "bot"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.VerifyToken(ctx, secret); !errors.Is(err, tools.ErrBadToken) {
		t.Fatalf("a token revoked through this process verified: %v", err)
	}
}

// Within the bound a known token is answered without the store: with the
// store closed it still verifies, and an unknown token does not.
func TestVerifyTokenFromTheCacheAsksNoQuery(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	secret, err := a.CreateToken(ctx, "ada", "bot")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := a.VerifyToken(ctx, secret); err != nil {
		t.Fatal(err)
	}
	if err := a.Store().Close(); err != nil {
		t.Fatal(err)
	}
	agent, err := a.VerifyToken(ctx, secret)
	if took := time.Since(start); err != nil && took >= tokenCacheFor {
		t.Skipf("the machine took %v over two calls, past the cache's bound", took)
	}
	if err != nil || agent != "bot" {
		t.Fatalf("a token verified a moment ago asked the store again: %q, %v", agent, err)
	}
	if _, err := a.VerifyToken(ctx, "obt_unknown"); err == nil || errors.Is(err, tools.ErrBadToken) {
		t.Fatalf("an unknown token was answered without the store: %v", err)
	}
}

// tokenSum is the hash the store keeps (tools.HashToken's text), for a
// token of usual length and for one longer than its stack buffer.
func TestTokenSumIsTheStoredHash(t *testing.T) {
	for _, tok := range []string{"", "obt_laZvlwzzbt3GX3tcxJYWxR7pGKuqLbZrONU9qfar66A", strings.Repeat("x", 128), strings.Repeat("y", 129), strings.Repeat("z", 4096)} {
		sum := tokenSum(tok)
		if got, want := hex.EncodeToString(sum[:]), tools.HashToken(tok); got != want {
			t.Fatalf("tokenSum(%d bytes) = %s, want %s", len(tok), got, want)
		}
	}
}

// A token verified from the cache costs no allocation (it is on every
// agent request), and a token in use only from the cache still has its
// use noted at least every tokenCacheFor: each entry expires, and the
// store's answer that renews it is noted.
func TestVerifyTokenFromTheCacheAllocatesNothingAndStillNotesUse(t *testing.T) {
	ctx := context.Background()
	a, err := Open(ctx, filepath.Join(t.TempDir(), "console.db"), Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	secret, err := a.CreateToken(ctx, "ada", "bot")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.VerifyToken(ctx, secret); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := a.VerifyToken(ctx, secret); err != nil {
			t.Fatal(err)
		}
	})
	if time.Since(start) < tokenCacheFor && allocs != 0 {
		t.Fatalf("a token verified from the cache allocated %v times", allocs)
	}

	a.uses.take() // forget the uses so far
	var last time.Time
	for end := time.Now().Add(3 * tokenCacheFor); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if _, err := a.VerifyToken(ctx, secret); err != nil {
			t.Fatal(err)
		}
		last = time.Now()
	}
	uses := a.uses.take()
	if len(uses) != 1 {
		t.Fatalf("uses noted = %v, want the token's", uses)
	}
	for _, at := range uses {
		if gap := last.Sub(at); gap > tokenCacheFor+50*time.Millisecond {
			t.Fatalf("the last use noted is %v before the last request; want within %v", gap, tokenCacheFor)
		}
	}
}

// BenchmarkVerifyTokenCached is the token check of every agent request
// within the cache's bound.
func BenchmarkVerifyTokenCached(b *testing.B) {
	ctx := context.Background()
	a, err := Open(ctx, filepath.Join(b.TempDir(), "console.db"), Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	secret, err := a.CreateToken(ctx, "ada", "bot")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.VerifyToken(ctx, secret); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A token read as active before a revocation committed, and put after the
// revocation cleared the cache, is not cached: the process that revoked
// it refuses it from then on (found in review).
func TestATokenReadBeforeARevocationIsNotCachedAfterIt(t *testing.T) {
	var c tokenCache
	sum, now := tokenSum("secret"), time.Now()
	gen := c.generation() // the verify starts, and asks the store
	c.clear()             // the revocation commits and clears the cache
	c.put(sum, 1, "agent", now, gen)
	if _, ok := c.get(sum, now); ok {
		t.Fatal("the token read before its revocation was cached after it")
	}
	c.put(sum, 1, "agent", now, c.generation())
	if got, ok := c.get(sum, now); !ok || got.name != "agent" {
		t.Fatalf("a put of the current generation is not kept: %v, %v", got, ok)
	}
}
