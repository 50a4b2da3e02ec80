package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// TestTokenViewIsSealedBoundToItsSessionAndSpentOnce: a parked token is
// stored only sealed, opens only for its session, is shown by the first
// view alone (the stored copy is blanked), and expires unseen.
func TestTokenViewIsSealedBoundToItsSessionAndSpentOnce(t *testing.T) {
	ta := openTestApp(t)
	ctx := context.Background()
	now := time.Now()
	id, err := ta.CreateTokenForView(ctx, now, "ada", "helpdesk-bot", 7, "https://console.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ta.TakeTokenView(ctx, now, 8, id); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another session's take: %v, want not found", err)
	}
	if onDisk := databaseText(t, ta.store.Path()); strings.Contains(onDisk, id) || strings.Contains(onDisk, tools.TokenPrefix) {
		t.Fatal("the database holds the view's ID or a token in the clear")
	}
	first, err := ta.TakeTokenView(ctx, now, 7, id)
	if err != nil || !strings.HasPrefix(first.Token, tools.TokenPrefix) || first.Name != "helpdesk-bot" || first.Base != "https://console.example" {
		t.Fatalf("first view = %+v, %v; want the token", first, err)
	}
	if agent, err := ta.VerifyToken(ctx, first.Token); err != nil || agent != "helpdesk-bot" {
		t.Fatalf("the token shown verifies as %q, %v", agent, err)
	}
	again, err := ta.TakeTokenView(ctx, now, 7, id)
	if err != nil || again.Token != "" || again.Name != "helpdesk-bot" {
		t.Fatalf("second view = %+v, %v; want the name without the token", again, err)
	}

	// A view never opened expires.
	unseen, err := ta.CreateTokenForView(ctx, now, "ada", "unseen-bot", 7, "https://console.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ta.TakeTokenView(ctx, now.Add(TokenViewTTL+time.Second), 7, unseen); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a view past its %v: %v, want not found", TokenViewTTL, err)
	}
	// A name the rules refuse creates nothing.
	if _, err := ta.CreateTokenForView(ctx, now, "ada", "no spaces", 7, "https://console.example"); err == nil {
		t.Fatal("a bad token name was accepted")
	}
}

// databaseText is the database file and its WAL as text.
func databaseText(t *testing.T, path string) string {
	t.Helper()
	var all []byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return string(all)
}

// Review finding: a view was spent (its sealed token blanked) before the
// replica taking it had opened the token, so a replica with another or
// no secret key answered an error and the token was lost: every later
// view, on any replica, said "already shown". A view this replica cannot
// open stays for one that can.
func TestATokenViewThisReplicaCannotOpenIsNotSpent(t *testing.T) {
	ta := openTestApp(t)
	ctx := context.Background()
	now := time.Now()
	id, err := ta.CreateTokenForView(ctx, now, "ada", "helpdesk-bot", 7, "https://console.example")
	if err != nil {
		t.Fatal(err)
	}
	// A replica started with another key.
	other := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	wrong, err := Open(ctx, ta.store.Path(), Options{Resolver: ta.resolver, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv: func(k string) string {
			if k == secretKeyEnv {
				return other
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	if v, err := wrong.TakeTokenView(ctx, now, 7, id); err == nil || v.Token != "" {
		t.Fatalf("a replica with another key took the view: %+v, %v; want an error", v, err)
	}
	got, err := ta.TakeTokenView(ctx, now, 7, id)
	if err != nil || !strings.HasPrefix(got.Token, tools.TokenPrefix) {
		t.Fatalf("the view after a replica failed to open it = %+v, %v; want the token", got, err)
	}
}
