package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/internal/pgtest"
	"github.com/outboundhq/outbound/models"
)

// proxyHealth is `console proxy`'s answer to GET /healthz.
type proxyHealth struct {
	code   int
	Status string `json:"status"`
	Reload struct {
		Current bool   `json:"current"`
		Error   string `json:"error"`
	} `json:"reload"`
}

func getProxyHealth(t *testing.T, addr string) proxyHealth {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	h := proxyHealth{code: resp.StatusCode}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("GET /healthz from the proxy: %s, not JSON: %v", resp.Status, err)
	}
	return h
}

// TestProxyCommandAnswersHealthz: several `console proxy` replicas behind
// a load balancer need the health check `console serve` has, so that
// one that cannot load a stored change (here: an entry removed through
// another replica while a lock holds the integrations table) is taken
// out with 503 "stale" rather than going on with the previous, wider
// allowlist. A plain GET /healthz (not a proxied request) answers it.
func TestProxyCommandAnswersHealthz(t *testing.T) {
	dsn := pgtest.Schema(t)
	other := otherReplica(t, dsn)
	if _, err := other.AddEntries(t.Context(), app.AddEntries{Entries: []string{"docs.example.com", "kept.example.com"}, Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	addr, stderr, stop := startProxyCommand(t, dsn)
	if h := getProxyHealth(t, addr); h.code != http.StatusOK || h.Status != "ok" || !h.Reload.Current {
		t.Fatalf("a current proxy's /healthz: %+v", h)
	}

	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), "LOCK TABLE integrations IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Store().RemoveAllowlistEntries(t.Context(), models.AnyRevision, []string{"docs.example.com"}); err != nil {
		t.Fatal(err)
	}
	var h proxyHealth
	for deadline := time.Now().Add(12 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if h = getProxyHealth(t, addr); h.code == http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
	}
	if h.code != http.StatusServiceUnavailable || h.Status != "stale" || h.Reload.Error == "" {
		t.Fatalf("a proxy that cannot load the stored change: /healthz %+v, want 503 stale with the error", h)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if h = getProxyHealth(t, addr); h.code == http.StatusOK || time.Now().After(deadline) {
			break
		}
	}
	if h.code != http.StatusOK || !h.Reload.Current {
		t.Fatalf("once the lock is gone: /healthz %+v, want 200 and current", h)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
}
