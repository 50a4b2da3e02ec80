package app

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

// TestTokenViewIsSealedBoundToItsSessionAndSpentOnce: a parked token is
// stored only sealed, opens only for its session, is shown by the first
// view alone (the stored copy is blanked), and expires unseen.
func TestTokenViewIsSealedBoundToItsSessionAndSpentOnce(t *testing.T) {
	ta := openTestApp(t)
	ctx := context.Background()
	token, err := ta.CreateToken(ctx, "ada", "helpdesk-bot")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	id, err := ta.ParkTokenView(ctx, now, 7, "helpdesk-bot", token, "https://console.example")
	if err != nil {
		t.Fatal(err)
	}
	if onDisk := databaseText(t, ta.store.Path()); strings.Contains(onDisk, token) || strings.Contains(onDisk, id) {
		t.Fatal("the database holds the token or the view's ID in the clear")
	}
	if _, err := ta.TakeTokenView(ctx, now, 8, id); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another session's take: %v, want not found", err)
	}
	first, err := ta.TakeTokenView(ctx, now, 7, id)
	if err != nil || first.Token != token || first.Name != "helpdesk-bot" || first.Base != "https://console.example" {
		t.Fatalf("first view = %+v, %v; want the token", first, err)
	}
	again, err := ta.TakeTokenView(ctx, now, 7, id)
	if err != nil || again.Token != "" || again.Name != "helpdesk-bot" {
		t.Fatalf("second view = %+v, %v; want the name without the token", again, err)
	}

	unseen, err := ta.ParkTokenView(ctx, now, 7, "helpdesk-bot", token, "https://console.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ta.TakeTokenView(ctx, now.Add(TokenViewTTL+time.Second), 7, unseen); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a view past its %v: %v, want not found", TokenViewTTL, err)
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
