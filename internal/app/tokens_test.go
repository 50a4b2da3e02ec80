package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

func TestCreateTokenReturnsTheSecretOnce(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	secret, err := a.CreateToken(ctx, "ada", "helpdesk-bot")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, tools.TokenPrefix) {
		t.Fatalf("secret %q lacks the token prefix", secret)
	}
	if agent, err := a.VerifyToken(ctx, secret); err != nil || agent != "helpdesk-bot" {
		t.Fatalf("VerifyToken = %q, %v", agent, err)
	}
	stored, err := a.Store().ListTokens(ctx)
	if err != nil || len(stored) != 1 || stored[0].Hash != tools.HashToken(secret) || strings.Contains(stored[0].Hash, secret) {
		t.Fatalf("the store holds %+v, %v; want only the secret's hash", stored, err)
	}
	toks, err := a.ListTokens(ctx)
	if err != nil || len(toks) != 1 || toks[0].Name != "helpdesk-bot" || !toks[0].Active() {
		t.Fatalf("ListTokens = %+v, %v", toks, err)
	}
	if got := strings.Join(auditTrail(t, a), ", "); got != "token.create helpdesk-bot" {
		t.Fatalf("audit trail %q", got)
	}
}

func TestCreateTokenRefusals(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	if _, err := a.CreateToken(ctx, "ada", "bot"); err != nil {
		t.Fatal(err)
	}
	var ne *TokenNameError
	if _, err := a.CreateToken(ctx, "ada", "help desk"); !errors.As(err, &ne) || ne.Problem != NameBadCharacters {
		t.Fatalf("a bad name: %v", err)
	}
	if _, err := a.CreateToken(ctx, "ada", "bot"); !errors.Is(err, models.ErrDuplicate) {
		t.Fatalf("a taken name: %v", err)
	}
	if toks, _ := a.ListTokens(ctx); len(toks) != 1 {
		t.Fatalf("%d tokens, want only the first", len(toks))
	}
	if got := strings.Join(auditTrail(t, a), ", "); got != "token.create bot" {
		t.Fatalf("refused creates were audited: %q", got)
	}
}

func TestRevokeToken(t *testing.T) {
	a, _ := identityApp(t)
	ctx := context.Background()
	secret, err := a.CreateToken(ctx, "ada", "bot")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeToken(ctx, "ada", "bot"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.VerifyToken(ctx, secret); !errors.Is(err, tools.ErrBadToken) {
		t.Fatalf("a revoked token verified: %v", err)
	}
	var already *AlreadyRevokedError
	if err := a.RevokeToken(ctx, "ada", "bot"); !errors.As(err, &already) || already.Name != "bot" || already.Since.IsZero() {
		t.Fatalf("revoking twice: %v, want an *AlreadyRevokedError with its time", err)
	}
	if err := a.RevokeToken(ctx, "ada", "ghost"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("revoking an unknown token: %v", err)
	}
	if got := strings.Join(auditTrail(t, a), ", "); got != "token.create bot, token.revoke bot" {
		t.Fatalf("audit trail %q, want one create and one revoke", got)
	}
}

// TestTokenChangesRollBackWhenTheirAuditFails: no token is created or
// revoked without its record.
func TestTokenChangesRollBackWhenTheirAuditFails(t *testing.T) {
	a, path := identityApp(t)
	ctx := context.Background()
	secret, err := a.CreateToken(ctx, "ada", "bot")
	if err != nil {
		t.Fatal(err)
	}
	failAudits(t, path)
	if _, err := a.CreateToken(ctx, "ada", "bot-2"); err == nil {
		t.Fatal("a token was created although its audit failed")
	}
	if err := a.RevokeToken(ctx, "ada", "bot"); err == nil {
		t.Fatal("a token was revoked although its audit failed")
	}
	toks, err := a.ListTokens(ctx)
	if err != nil || len(toks) != 1 || !toks[0].Active() {
		t.Fatalf("tokens %+v, %v; want bot alone, still active", toks, err)
	}
	if _, err := a.VerifyToken(ctx, secret); err != nil {
		t.Fatalf("bot no longer verifies: %v", err)
	}
}
