package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// TestReloadingTheNewTokenPageSubmitsNothing: creating a token is
// post/redirect/get; the view shows the token once, and a reload (or the
// admin's other session, or anyone guessing) gets "already shown" without
// the token, and creates no second token or error.
func TestReloadingTheNewTokenPageSubmitsNothing(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	_, token := createToken(t, b, "helpdesk-bot")
	toks, _ := h.store.ListTokens(context.Background())
	if len(toks) != 1 {
		t.Fatalf("tokens after create: %d", len(toks))
	}
	// The view's URL, as the browser's address bar holds it.
	resp := b.postForm("/agents", url.Values{"name": {"second-bot"}})
	resp.Body.Close()
	view := resp.Header.Get("Location")
	other := h.browser()
	if r := other.postForm("/login", url.Values{"name": {"ada"}, "password": {testPassword}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("second session: %d", r.StatusCode)
	}
	if p := other.get(view); p.status != http.StatusGone || p.doc.Find(`[data-testid="new-token"]`).Length() != 0 {
		t.Fatalf("another session opened the one-time view: %d", p.status)
	}
	first := b.get(view)
	second := strings.TrimSpace(first.doc.Find(`[data-testid="new-token"]`).Text())
	if first.status != http.StatusOK || second == "" || second == token {
		t.Fatalf("the creating session's view after another's try: %d %q", first.status, second)
	}
	reload := b.get(view)
	if reload.status != http.StatusGone || strings.Contains(reload.body, second) {
		t.Fatalf("reload: %d, token shown again: %v", reload.status, strings.Contains(reload.body, second))
	}
	if got := reload.doc.Find(`[data-testid="token-shown"]`).Text(); !strings.Contains(got, "second-bot") || !strings.Contains(reload.body, "revoke it") {
		t.Errorf("the reload does not say the token was shown and what to do: %q", got)
	}
	if cc := reload.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q on the one-time view", cc)
	}
	if toks, _ := h.store.ListTokens(context.Background()); len(toks) != 2 {
		t.Errorf("tokens: %d, want 2 (no re-submission)", len(toks))
	}
}

// TestNewTokenIsShownOnceOnAnyReplica: behind a load balancer the
// redirect after creating a token may reach another replica; that one
// shows the token, and after it neither replica shows it again.
func TestNewTokenIsShownOnceOnAnyReplica(t *testing.T) {
	onEachEngine(t, func(t *testing.T, target string) {
		a := newHarnessOn(t, target, nil)
		b := newHarnessOn(t, target, nil)
		viaA := a.signedIn("ada", models.RoleAdmin)
		resp := viaA.postForm("/agents", url.Values{"name": {"helpdesk-bot"}})
		resp.Body.Close()
		view := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(view, "/agents/new/") {
			t.Fatalf("create on replica A: %d %q", resp.StatusCode, view)
		}
		// The same browser's session cookie, presented to replica B.
		viaB := b.browser()
		au, _ := url.Parse(a.srv.URL)
		bu, _ := url.Parse(b.srv.URL)
		viaB.client.Jar.SetCookies(bu, viaA.client.Jar.Cookies(au))
		shown := viaB.get(view)
		token := strings.TrimSpace(shown.doc.Find(`[data-testid="new-token"]`).Text())
		if shown.status != http.StatusOK || !strings.HasPrefix(token, tools.TokenPrefix) {
			t.Fatalf("replica B's view of a token made on A: %d %q, want 200 and the token", shown.status, token)
		}
		if agent, err := b.app.VerifyToken(context.Background(), token); err != nil || agent != "helpdesk-bot" {
			t.Fatalf("the token shown does not verify as helpdesk-bot: %q %v", agent, err)
		}
		for name, br := range map[string]*browser{"A": viaA, "B": viaB} {
			if p := br.get(view); p.status != http.StatusGone || strings.Contains(p.body, token) {
				t.Errorf("replica %s shows the spent view: %d (token again: %v), want 410 without it", name, p.status, strings.Contains(p.body, token))
			}
		}
	})
}
