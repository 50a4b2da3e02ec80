package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

func TestFirstRunSetupWorksOnce(t *testing.T) {
	h := newHarness(t)
	b := h.browser()
	if p := b.get("/setup?token=wrong"); p.status != http.StatusNotFound {
		t.Fatalf("a wrong setup token: %d", p.status)
	}
	tok := h.setup.Value()
	p := b.get("/setup?token=" + tok)
	if p.status != 200 || p.doc.Find(`form[action="/setup"] input[name="password2"]`).Length() != 1 {
		t.Fatalf("setup page: %d", p.status)
	}
	csrf, _ := p.doc.Find(`input[name="_csrf"]`).Attr("value")
	bad := b.post("/setup", url.Values{"_csrf": {csrf}, "token": {tok}, "name": {"ada lovelace"}, "password": {"short"}, "password2": {"short"}})
	if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.body, "without spaces") || !strings.Contains(bad.body, "at least 10 characters") {
		t.Fatalf("bad setup input: %d %s", bad.status, bad.body)
	}
	if n, _ := h.store.CountUsers(t.Context()); n != 0 {
		t.Fatal("a user was created from bad input")
	}
	resp := b.postForm("/setup", url.Values{"_csrf": {csrf}, "token": {tok}, "name": {"ada"}, "password": {testPassword}, "password2": {testPassword}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/integrations" {
		t.Fatalf("setup: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if u, err := h.store.UserByName(t.Context(), "ada"); err != nil || u.Role != models.RoleAdmin {
		t.Fatalf("first admin: %+v %v", u, err)
	}
	if p := b.get("/account"); p.status != 200 || !strings.Contains(p.body, "ada") {
		t.Fatalf("the new admin is signed in: %d", p.status)
	}
	if p := h.browser().get("/setup?token=" + tok); p.status != http.StatusGone || p.doc.Find(`form[action="/setup"]`).Length() != 0 {
		t.Fatalf("the setup link works twice: %d", p.status)
	}
}

func TestSignInSignOutAndWrongPassword(t *testing.T) {
	h := newHarness(t)
	h.addUser("ada", models.RoleAdmin)
	b := h.browser()
	if p := b.get("/refusals"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/login?next=%2Frefusals") {
		t.Fatalf("anonymous page view: %d %s", p.status, p.header.Get("Location"))
	}
	wrong := b.post("/login", url.Values{"name": {"ada"}, "password": {"not the password"}})
	if wrong.status != http.StatusUnauthorized || wrong.doc.Find(`[data-testid="login-error"]`).Text() == "" {
		t.Fatalf("wrong password: %d", wrong.status)
	}
	unknown := b.post("/login", url.Values{"name": {"nobody"}, "password": {"whatever it is"}})
	if unknown.status != http.StatusUnauthorized || unknown.doc.Find(`[data-testid="login-error"]`).Text() != wrong.doc.Find(`[data-testid="login-error"]`).Text() {
		t.Fatalf("an unknown name must read like a wrong password: %d", unknown.status)
	}
	resp := b.postForm("/login", url.Values{"name": {"ada"}, "password": {testPassword}, "next": {"/refusals"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/refusals" {
		t.Fatalf("sign in: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure {
		t.Fatalf("session cookie: %+v", session)
	}
	if resp := b.postForm("/logout", url.Values{}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if p := b.get("/account"); p.status != http.StatusSeeOther {
		t.Fatalf("still signed in after logout: %d", p.status)
	}
	// The old cookie no longer works either: the session is gone from the store.
	replay := h.browser()
	u, _ := url.Parse(h.srv.URL)
	replay.client.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookie, Value: session.Value}})
	if p := replay.get("/account"); p.status != http.StatusSeeOther {
		t.Fatalf("a logged-out session cookie still works: %d", p.status)
	}
}

func TestOpenRedirectAfterSignInIsRefused(t *testing.T) {
	for _, next := range []string{"https://evil.example/", "//evil.example/", "/\\evil.example", "/\t/evil.example/", "/\n/evil.example", "/\r//evil.example", "/\\/evil.example", "javascript:alert(1)", "/ok\t"} {
		if got := safeNext(next); got != "/integrations" {
			t.Fatalf("safeNext(%q) = %q", next, got)
		}
	}
	if got := safeNext("/refusals?code=forbidden"); got != "/refusals?code=forbidden" {
		t.Fatalf("a local next was dropped: %q", got)
	}
}

func TestSignInThrottle(t *testing.T) {
	h := newHarness(t)
	h.addUser("ada", models.RoleAdmin)
	b := h.browser()
	for i := 0; i < 5; i++ {
		if p := b.post("/login", url.Values{"name": {"ada"}, "password": {"guess " + string(rune('a'+i))}}); p.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, p.status)
		}
	}
	p := b.post("/login", url.Values{"name": {"ada"}, "password": {testPassword}})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || !strings.Contains(p.body, "Too many failed sign-ins") {
		t.Fatalf("sixth attempt: %d Retry-After=%q", p.status, p.header.Get("Retry-After"))
	}
}

func TestPostWithoutCSRFIsRefused(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	resp := b.postRaw("/logout", url.Values{})
	p := readPage(t, resp)
	if p.status != http.StatusForbidden || !strings.Contains(p.body, "security token") {
		t.Fatalf("POST without CSRF: %d", p.status)
	}
	if p := b.get("/account"); p.status != 200 {
		t.Fatal("the refused logout must not have signed out")
	}
}

func TestPasswordChangeEndsSessions(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	other := h.browser()
	if resp := other.postForm("/login", url.Values{"name": {"ada"}, "password": {testPassword}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatal("second sign-in failed")
	}
	bad := b.post("/account/password", url.Values{"current": {"wrong"}, "password": {"new password 123"}, "password2": {"new password 123"}})
	if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.body, "not your current password") {
		t.Fatalf("wrong current password: %d", bad.status)
	}
	resp := b.postForm("/account/password", url.Values{"current": {testPassword}, "password": {"new password 123"}, "password2": {"new password 123"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("change password: %d", resp.StatusCode)
	}
	for i, br := range []*browser{b, other} {
		if p := br.get("/account"); p.status != http.StatusSeeOther {
			t.Fatalf("browser %d is still signed in after a password change", i)
		}
	}
	if resp := h.browser().postForm("/login", url.Values{"name": {"ada"}, "password": {"new password 123"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatal("the new password does not work")
	}
}

func TestHealthzAndSecurityHeaders(t *testing.T) {
	h := newHarness(t)
	p := h.browser().get("/healthz")
	if p.status != 200 || !strings.Contains(p.body, `"status":"ok"`) {
		t.Fatalf("healthz: %d %s", p.status, p.body)
	}
	login := h.browser().get("/login")
	if csp := login.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("CSP: %q", csp)
	}
	if css := h.browser().get("/static/app.css"); css.status != 200 || !strings.Contains(css.body, ".rail") {
		t.Fatalf("static CSS: %d", css.status)
	}
	if nf := h.signedIn("ada", models.RoleAdmin).get("/nowhere"); nf.status != 404 || !strings.Contains(nf.body, "There is no page at /nowhere") {
		t.Fatalf("404 page: %d", nf.status)
	}
}
