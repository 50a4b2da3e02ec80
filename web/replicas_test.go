package web

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/outboundhq/outbound/internal/pgtest"
	"github.com/outboundhq/outbound/models"
)

// replicaPair is two consoles on one database, as two replicas behind a
// load balancer are: nothing is shared between them but the database.
func replicaPair(t *testing.T, target string) (a, b *harness, setupA *SetupToken) {
	t.Helper()
	a = newHarnessOn(t, target, func(d *Deps) {
		tok, err := NewSharedSetupToken(context.Background(), d.Store.(SetupLinks))
		if err != nil {
			t.Fatal(err)
		}
		d.Setup, setupA = tok, tok
	})
	b = newHarnessOn(t, target, func(d *Deps) {
		tok, err := NewSharedSetupToken(context.Background(), d.Store.(SetupLinks))
		if err != nil {
			t.Fatal(err)
		}
		d.Setup = tok
	})
	return a, b, setupA
}

// onEachEngine runs body on a SQLite file and on a PostgreSQL schema.
func onEachEngine(t *testing.T, body func(t *testing.T, target string)) {
	t.Run("sqlite", func(t *testing.T) { body(t, filepath.Join(t.TempDir(), "console.db")) })
	t.Run("postgres", func(t *testing.T) { body(t, pgtest.Schema(t)) })
}

// TestSetupLinkAndSessionWorkOnEveryReplica: the setup link one replica
// printed creates the first admin through the other; the session that
// made is valid on the first; once used, the link is dead on both.
func TestSetupLinkAndSessionWorkOnEveryReplica(t *testing.T) {
	onEachEngine(t, func(t *testing.T, target string) {
		a, b, setupA := replicaPair(t, target)
		tok := setupA.Value()

		viaB := b.browser()
		csrf := viaB.csrf("/setup?token=" + url.QueryEscape(tok))
		resp := viaB.postRaw("/setup", url.Values{"_csrf": {csrf}, "token": {tok}, "name": {"ada"}, "password": {testPassword}, "password2": {testPassword}})
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("replica B refused replica A's setup link: %d", resp.StatusCode)
		}
		// The session cookie B set, presented to A.
		viaA := a.browser()
		u, _ := url.Parse(a.srv.URL)
		bu, _ := url.Parse(b.srv.URL)
		viaA.client.Jar.SetCookies(u, viaB.client.Jar.Cookies(bu))
		if p := viaA.get("/account"); p.status != http.StatusOK {
			t.Fatalf("a session made on replica B is refused by replica A: %d", p.status)
		}
		for _, h := range []*harness{a, b} {
			if p := h.browser().get("/setup?token=" + url.QueryEscape(tok)); p.status != http.StatusNotFound {
				t.Errorf("the used setup link still answers %d on a replica, want 404", p.status)
			}
		}
	})
}

// TestSignInThrottleCountsAcrossReplicas: failures made on one replica
// count on the other, so a load balancer does not multiply the guesses an
// attacker gets.
func TestSignInThrottleCountsAcrossReplicas(t *testing.T) {
	onEachEngine(t, func(t *testing.T, target string) {
		clock := newTestClock()
		a := newHarnessOn(t, target, func(d *Deps) { d.Now = clock.now })
		b := newHarnessOn(t, target, func(d *Deps) { d.Now = clock.now })
		a.addUser("ada", models.RoleAdmin)
		guess := func(h *harness) int {
			br := h.browser()
			resp := br.postForm("/login", url.Values{"name": {"ada"}, "password": {"wrong guess"}})
			resp.Body.Close()
			return resp.StatusCode
		}
		for i := 0; i < accountThrottle.free; i++ {
			h := a
			if i%2 == 1 {
				h = b
			}
			if got := guess(h); got != http.StatusUnauthorized {
				t.Fatalf("guess %d: %d, want 401", i+1, got)
			}
		}
		for _, h := range []*harness{a, b} {
			if got := guess(h); got != http.StatusTooManyRequests {
				t.Fatalf("after %d failures spread over two replicas, a replica answered %d, want 429", accountThrottle.free, got)
			}
		}
	})
}
