package web

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/app"
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
// made is valid on the first; once used, the link is dead on both and
// says so on both.
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
		// Used up on B, the link says "already used — sign in" on every
		// replica (410), not only on the one that used it; a wrong token
		// stays not found everywhere.
		for name, h := range map[string]*harness{"A": a, "B": b} {
			if p := h.browser().get("/setup?token=" + url.QueryEscape(tok)); p.status != http.StatusGone || p.doc.Find(`[data-testid="setup-used"]`).Length() != 1 {
				t.Errorf("the used setup link answers %d on replica %s, want 410 and the already-used page", p.status, name)
			}
			if p := h.browser().get("/setup?token=wrong"); p.status != http.StatusNotFound {
				t.Errorf("a wrong setup token answers %d on replica %s, want 404", p.status, name)
			}
		}
		// A replica started after the setup prints no link of its own, and
		// says the same of the used one (it answered 404: it had no token).
		c := newHarnessOn(t, target, func(d *Deps) {
			tok, err := ServeSetupToken(context.Background(), d.Store.(SetupLinks), true)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Value() != "" {
				t.Error("a replica started after the setup has a setup link of its own")
			}
			d.Setup = tok
		})
		if p := c.browser().get("/setup?token=" + url.QueryEscape(tok)); p.status != http.StatusGone || p.doc.Find(`[data-testid="setup-used"]`).Length() != 1 {
			t.Errorf("the used setup link answers %d on a replica started after the setup, want 410 and the already-used page", p.status)
		}
		if p := c.browser().get("/setup?token=wrong"); p.status != http.StatusNotFound {
			t.Errorf("a wrong setup token answers %d on a replica started after the setup, want 404", p.status)
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

// TestSignInLockHoldsOnAReplicaWhoseClockRunsAhead: replica B's clock
// runs 90 s ahead of A's, more than the first lock lasts. The lock that
// failures on A made still holds on B, B checks no password, and B tells
// the same wait and the same time to try again as A: the failures, the
// window and the wait are all measured on the database's clock. Only
// PostgreSQL: replicas on one SQLite file share one machine's clock.
func TestSignInLockHoldsOnAReplicaWhoseClockRunsAhead(t *testing.T) {
	clockA, clockB := newTestClock(), newTestClock()
	clockB.advance(90 * time.Second)
	checks := countPasswordChecks(t)
	target := pgtest.Schema(t)
	a := newHarnessOn(t, target, func(d *Deps) { d.Now = clockA.now })
	b := newHarnessOn(t, target, func(d *Deps) { d.Now = clockB.now })
	a.addUser("ada", models.RoleAdmin)
	guess := func(h *harness) (status int, retryAfter, body string) {
		resp := h.browser().postForm("/login", url.Values{"name": {"ada"}, "password": {"wrong guess"}})
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	}
	for i := 0; i < accountThrottle.free; i++ {
		if got, _, _ := guess(a); got != http.StatusUnauthorized {
			t.Fatalf("guess %d on A: %d, want 401", i+1, got)
		}
	}
	statusA, waitA, bodyA := guess(a)
	if statusA != http.StatusTooManyRequests {
		t.Fatalf("A after %d failures: %d, want 429", accountThrottle.free, statusA)
	}
	before := checks.Load()
	statusB, waitB, bodyB := guess(b)
	if statusB != http.StatusTooManyRequests {
		t.Fatalf("B (clock 90 s ahead) after %d failures on A: %d, want 429", accountThrottle.free, statusB)
	}
	if n := checks.Load() - before; n != 0 {
		t.Fatalf("B checked the password %d times while the account was locked", n)
	}
	secsA, errA := strconv.Atoi(waitA)
	secsB, errB := strconv.Atoi(waitB)
	if errA != nil || errB != nil || secsA <= 0 || secsA > int(accountThrottle.base/time.Second) || secsB < secsA-1 || secsB > secsA {
		t.Fatalf("Retry-After is %q on A and %q on B, want about one wait of at most %s on both", waitA, waitB, accountThrottle.base)
	}
	at := regexp.MustCompile(`Try again at (\d\d:\d\d:\d\d) UTC`)
	untilA, untilB := at.FindStringSubmatch(bodyA), at.FindStringSubmatch(bodyB)
	if untilA == nil || untilB == nil || untilA[1] != untilB[1] {
		t.Fatalf("A and B name different times to try again (%v, %v):\nA: %s\nB: %s", untilA, untilB, bodyA, bodyB)
	}
}

// TestHealthzReportsTheReplicasReloadState: /healthz says which engine the
// replica uses, which revision it enforces and how changes reach it; a
// change made by another process shows up as current once the watch has
// applied it, with its lag measured.
func TestHealthzReportsTheReplicasReloadState(t *testing.T) {
	onEachEngine(t, func(t *testing.T, target string) {
		h := newHarnessOn(t, target, func(d *Deps) { d.Reloads = nil })
		other := newHarnessOn(t, target, nil)
		srv := httptest.NewServer(New(Deps{Store: h.store, Guard: h.guard, Settings: h.app.Settings, Config: h.app, Identity: h.app, Refusals: h.app, Reloads: h.app,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
		defer srv.Close()
		type health struct {
			Revision int64
			Store    struct{ Engine string }
			Reload   struct {
				Revision      int64
				Current       bool
				LagMS         float64 `json:"last_lag_ms"`
				Notifications string
			}
		}
		get := func() health {
			resp, err := http.Get(srv.URL + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got health
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("/healthz: %d %v", resp.StatusCode, err)
			}
			return got
		}
		engine := "sqlite"
		if strings.HasPrefix(target, "postgres") {
			engine = "postgres"
		}
		if got := get(); got.Store.Engine != engine || !got.Reload.Current || got.Reload.Notifications != "off" {
			t.Fatalf("before the watch: %+v; want %s, current, notifications off", got, engine)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go h.app.Watch(ctx)
		if _, err := other.app.AddEntries(ctx, app.AddEntries{Entries: []string{"docs.example.com"}, Actor: "test", Version: models.AnyRevision}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Second)
		var got health
		// The lag is noted just after the reload that makes the change
		// current: a look in between sees it current with no lag yet.
		for got = get(); !(got.Reload.Current && got.Revision == 1 && got.Reload.LagMS > 0); got = get() {
			if time.Now().After(deadline) {
				t.Fatalf("the change never became current, with its lag measured, on the watching replica: %+v", got)
			}
			time.Sleep(10 * time.Millisecond)
		}
		want := "polling"
		if engine == "postgres" {
			want = "listening"
		}
		if got.Reload.Notifications != want || got.Reload.LagMS <= 0 {
			t.Fatalf("after a change: %+v; want notifications %s and a measured lag", got, want)
		}
	})
}
