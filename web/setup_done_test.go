package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// A support user added from the command line ends first-run setup: the
// setup link must say how to add an admin instead of offering a form that
// CreateFirstAdmin would refuse.
func TestSetupLinkOnceAUserExists(t *testing.T) {
	const done = "Setup is done: users exist. To add an admin, run:"
	h := newHarness(t)
	h.addUser("sam", models.RoleSupport)
	tok := h.setup.Value()
	b := h.browser()

	p := b.get("/setup?token=" + tok)
	if p.status != http.StatusOK || !strings.Contains(p.doc.Find(`[data-testid="setup-done"]`).Text(), done) {
		t.Fatalf("GET /setup: status %d, want 200 and %q:\n%s", p.status, done, p.body)
	}
	if p.doc.Find(`form[action="/setup"]`).Length() != 0 {
		t.Error("the setup form is offered although it can only fail")
	}
	if !strings.Contains(p.doc.Find("pre").Text(), "console user add --role admin NAME") {
		t.Error("the page does not give the command that adds an admin")
	}
	if h.setup.Value() != tok {
		t.Error("looking at the setup link used up its token")
	}
	if p := b.get("/setup?token=wrong"); p.status != http.StatusNotFound {
		t.Errorf("a wrong token: status %d, want 404 (the page says nothing to a guess)", p.status)
	}

	// A form kept open from before the user was added.
	res := b.post("/setup", url.Values{"_csrf": {b.csrf("/login")}, "token": {tok}, "name": {"eve"}, "password": {testPassword}, "password2": {testPassword}})
	if res.status != http.StatusConflict || !strings.Contains(res.doc.Find(`[data-testid="setup-done"]`).Text(), done) {
		t.Fatalf("POST /setup: status %d, want 409 and the setup-done page", res.status)
	}
	if n, err := h.store.CountUsers(context.Background()); err != nil || n != 1 {
		t.Errorf("users after the refused setup: %d (%v), want only sam", n, err)
	}
	if h.setup.Value() != "" {
		t.Error("the setup token still works after setup was found done")
	}
}
