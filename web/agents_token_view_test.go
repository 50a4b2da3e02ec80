package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
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

// TestParkedTokensExpireAndAreBounded: a token never viewed does not stay
// in memory past its TTL, nor past the bound.
func TestParkedTokensExpireAndAreBounded(t *testing.T) {
	v := newTokenViews()
	now := time.Now()
	id, _ := v.park(now, 1, "a", "secret-a", "http://x")
	if _, ok := v.take(now.Add(tokenViewTTL+time.Second), 1, id); ok {
		t.Error("an expired view was found")
	}
	var ids []string
	for i := 0; i < maxTokenViews+10; i++ {
		id, _ := v.park(now, 1, "n", "s", "http://x")
		ids = append(ids, id)
	}
	if len(v.m) > maxTokenViews {
		t.Errorf("%d parked views, bound %d", len(v.m), maxTokenViews)
	}
	if _, ok := v.take(now, 1, ids[0]); ok {
		t.Error("the oldest view survived the bound")
	}
	if p, ok := v.take(now, 1, ids[len(ids)-1]); !ok || p.token != "s" {
		t.Error("the newest view was dropped")
	}
}
