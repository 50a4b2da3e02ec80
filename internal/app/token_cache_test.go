package app

import (
	"context"
	"errors"
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
