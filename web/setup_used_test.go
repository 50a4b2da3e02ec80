package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// TestSignInPageOfAFreshInstallSaysSetupIsNeeded: with no user, nobody can
// sign in, so the page says so and how to create the first admin; once a
// user exists the notice is gone.
func TestSignInPageOfAFreshInstallSaysSetupIsNeeded(t *testing.T) {
	h := newHarness(t)
	b := h.browser()
	p := b.get("/login")
	notice := p.doc.Find(`[data-testid="setup-needed"]`).Text()
	for _, want := range []string{"Setup is needed", "console serve", "console user add --role admin NAME", "console init"} {
		if !strings.Contains(notice, want) {
			t.Errorf("the fresh install's sign-in page does not say %q: %q", want, notice)
		}
	}
	// A failed sign-in re-renders the page with the same notice.
	res := b.post("/login", url.Values{"name": {"ada"}, "password": {testPassword}})
	if res.status != http.StatusUnauthorized || res.doc.Find(`[data-testid="setup-needed"]`).Length() != 1 {
		t.Errorf("failed sign-in on a fresh install: %d, setup notice %d", res.status, res.doc.Find(`[data-testid="setup-needed"]`).Length())
	}
	h.addUser("ada", models.RoleAdmin)
	if n := h.browser().get("/login").doc.Find(`[data-testid="setup-needed"]`).Length(); n != 0 {
		t.Error("the sign-in page still says setup is needed once a user exists")
	}
}

// TestReusedSetupLinkSaysAlreadyUsed: the link that created the first
// admin, opened again (or its form re-posted), says it was used and leads
// to sign-in; it creates no second user. A wrong token stays not found.
func TestReusedSetupLinkSaysAlreadyUsed(t *testing.T) {
	h := newHarness(t)
	tok := h.setup.Value()
	b := h.browser()
	form := url.Values{"_csrf": {b.csrf("/setup?token=" + tok)}, "token": {tok}, "name": {"ada"}, "password": {testPassword}, "password2": {testPassword}}
	if resp := b.postRaw("/setup", form); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("setup: %d", resp.StatusCode)
	}
	other := h.browser()
	p := other.get("/setup?token=" + tok)
	if p.status != http.StatusGone || !strings.Contains(p.doc.Find(`[data-testid="setup-used"]`).Text(), "Sign in") {
		t.Fatalf("reused setup link: %d, want 410 and the already-used page:\n%s", p.status, p.body)
	}
	if href, _ := p.doc.Find(`a[href="/login"]`).Attr("href"); href != "/login" {
		t.Error("the already-used page has no sign-in link")
	}
	form = url.Values{"_csrf": {other.csrf("/login")}, "token": {tok}, "name": {"eve"}, "password": {testPassword}, "password2": {testPassword}}
	if res := other.post("/setup", form); res.status != http.StatusGone || res.doc.Find(`[data-testid="setup-used"]`).Length() != 1 {
		t.Errorf("re-posted setup form: %d, want 410 and the already-used page", res.status)
	}
	if n, _ := h.store.CountUsers(context.Background()); n != 1 {
		t.Errorf("users after the reused link: %d, want 1", n)
	}
	if p := other.get("/setup?token=wrong"); p.status != http.StatusNotFound {
		t.Errorf("a wrong setup token: %d, want 404", p.status)
	}
}
