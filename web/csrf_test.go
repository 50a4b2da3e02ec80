package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// postWith submits form to path with extra request headers (Origin,
// Sec-Fetch-Site), as a browser on some page would.
func (b *browser) postWith(path string, form url.Values, header map[string]string) page {
	b.h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.h.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.h.t.Fatal(err)
	}
	return readPage(b.h.t, resp)
}

// addEve is the attacker's form of issue 9, finding 1: a new admin.
func addEve(token string) url.Values {
	return url.Values{"_csrf": {token}, "name": {"eve"}, "role": {"admin"}, "password": {"eve-owns-this-console"}, "password2": {"eve-owns-this-console"}}
}

// noEve asserts the attack saved nothing.
func noEve(t *testing.T, h *harness) {
	t.Helper()
	if _, err := h.store.UserByName(context.Background(), "eve"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("user eve exists after a refused request (lookup err %v)", err)
	}
}

// TestCSRFTokenIsBoundToTheSession: the token of one signed-in session
// does not work for another, a post without one is refused, and the
// session's own token works; the refusals save nothing.
func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	bob := h.signedIn("bob", models.RoleAdmin)
	adaToken, bobToken := ada.csrf("/users"), bob.csrf("/users")
	if adaToken == bobToken {
		t.Fatalf("two sessions got the same CSRF token %q", adaToken)
	}
	if again := ada.csrf("/account"); again != adaToken {
		t.Fatalf("one session's token changed between pages: %q then %q", adaToken, again)
	}

	for _, tt := range []struct {
		name  string
		token string
	}{{"another session's token", bobToken}, {"no token", ""}, {"made-up token", "tossed-token"}} {
		t.Run(tt.name, func(t *testing.T) {
			p := readPage(t, ada.postRaw("/users", addEve(tt.token)))
			if p.status != http.StatusForbidden || !strings.Contains(p.body, "missing its security token") {
				t.Fatalf("POST /users with %s answered %d; want 403 naming the token:\n%.400s", tt.name, p.status, p.body)
			}
			noEve(t, h)
		})
	}

	// The session's own token in the header works as well as in the form.
	p := ada.postWith("/users", addEve(""), map[string]string{"X-CSRF-Token": adaToken})
	if p.status != http.StatusSeeOther {
		t.Fatalf("POST /users with ada's token in X-CSRF-Token answered %d:\n%.400s", p.status, p.body)
	}
	if _, err := h.store.UserByName(context.Background(), "eve"); err != nil {
		t.Fatalf("the accepted POST /users saved no user: %v", err)
	}
}

// TestCSRFTossedCookieRefused is the cookie-tossing attack without a
// browser: the request carries the admin's session and a planted
// outbound_csrf cookie equal to its form token, and no Origin or
// Sec-Fetch-Site (plain HTTP on a real name sends neither). A check that
// compares the form with a cookie passed this and created eve.
func TestCSRFTossedCookieRefused(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	u, _ := url.Parse(h.srv.URL + "/users")
	ada.client.Jar.SetCookies(u, []*http.Cookie{{Name: preSessionCSRFCookie, Value: "tossed-token-tossed-token-tossed-token", Path: "/users"}})
	p := ada.postWith("/users", addEve("tossed-token-tossed-token-tossed-token"), nil)
	if p.status != http.StatusForbidden {
		t.Fatalf("the tossed-cookie POST /users answered %d; want 403:\n%.400s", p.status, p.body)
	}
	noEve(t, h)
}

// TestCSRFOriginChecked: a change from any origin but the console's own
// is refused even with the session's valid token, as is one a browser
// marks same-site or cross-site (another port or a sibling subdomain is
// the same site); the console's own origin, or no origin information at
// all (an old client), is left to the token.
func TestCSRFOriginChecked(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	token := ada.csrf("/users")
	own := h.srv.URL // http://127.0.0.1:PORT
	otherPort := regexp.MustCompile(`:\d+$`).ReplaceAllString(own, ":1")
	for _, tt := range []struct {
		name   string
		header map[string]string
	}{
		{"another port of the same host", map[string]string{"Origin": otherPort, "Sec-Fetch-Site": "same-site"}},
		{"another port, Origin only", map[string]string{"Origin": otherPort}},
		{"another host", map[string]string{"Origin": "http://evil.example"}},
		{"another scheme", map[string]string{"Origin": strings.Replace(own, "http://", "ftp://", 1)}},
		{"opaque origin", map[string]string{"Origin": "null"}},
		{"same-site without Origin", map[string]string{"Sec-Fetch-Site": "same-site"}},
		{"cross-site without Origin", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"own Origin but marked same-site", map[string]string{"Origin": own, "Sec-Fetch-Site": "same-site"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := ada.postWith("/users", addEve(token), tt.header)
			if p.status != http.StatusForbidden || !strings.Contains(p.body, "sent from another site") {
				t.Fatalf("POST /users from %v answered %d; want 403 naming the other site:\n%.400s", tt.header, p.status, p.body)
			}
			noEve(t, h)
		})
	}
	for i, header := range []map[string]string{
		{"Origin": own, "Sec-Fetch-Site": "same-origin"},
		{"Origin": strings.ToUpper(own[:4]) + own[4:]},
		{},
	} {
		form := addEve(token)
		form.Set("name", "eve"+string(rune('a'+i)))
		if p := ada.postWith("/users", form, header); p.status != http.StatusSeeOther {
			t.Fatalf("POST /users from the console's own page (%v) answered %d:\n%.400s", header, p.status, p.body)
		}
	}
}

// TestCSRFSignInRefusesAnotherOrigin: before sign-in the token lives in
// a cookie a sibling could plant, so the Origin check is what stops a
// forged sign-in (which would sign the admin's browser in as the
// attacker); no session cookie is set.
func TestCSRFSignInRefusesAnotherOrigin(t *testing.T) {
	h := newHarness(t)
	h.addUser("mallory", models.RoleSupport)
	b := h.browser()
	token := b.csrf("/login")
	p := b.postWith("/login", url.Values{"_csrf": {token}, "name": {"mallory"}, "password": {testPassword}}, map[string]string{"Origin": "http://localhost:1", "Sec-Fetch-Site": "same-site"})
	if p.status != http.StatusForbidden {
		t.Fatalf("a sign-in posted from another origin answered %d; want 403:\n%.400s", p.status, p.body)
	}
	if strings.Contains(p.header.Get("Set-Cookie"), sessionCookie) {
		t.Fatalf("the refused sign-in set a session cookie: %q", p.header.Values("Set-Cookie"))
	}
	if p := b.postWith("/login", url.Values{"_csrf": {token}, "name": {"mallory"}, "password": {testPassword}}, map[string]string{"Origin": h.srv.URL}); p.status != http.StatusSeeOther {
		t.Fatalf("the same sign-in from the console's own page answered %d:\n%.400s", p.status, p.body)
	}
}

// TestCSRFCookiesAreHostPrefixedUnderTLS: served over HTTPS, the
// pre-session token and the session live in __Host- cookies (Secure,
// Path=/, no Domain), which no other host or port can set; a planted
// plain outbound_csrf cookie is not read there.
func TestCSRFCookiesAreHostPrefixedUnderTLS(t *testing.T) {
	srv, client := newTLSConsole(t)

	resp, err := client.Get(srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var pre *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "__Host-"+preSessionCSRFCookie {
			pre = c
		}
		if c.Name == preSessionCSRFCookie {
			t.Fatalf("over HTTPS the console set the unprefixed %s cookie", c.Name)
		}
	}
	if pre == nil || !pre.Secure || pre.Path != "/" || pre.Domain != "" || !pre.HttpOnly {
		t.Fatalf("pre-session CSRF cookie over HTTPS: %+v", pre)
	}

	// A planted unprefixed cookie and a form token equal to it: refused.
	u, _ := url.Parse(srv.URL + "/login")
	client.Jar.SetCookies(u, []*http.Cookie{{Name: preSessionCSRFCookie, Value: "tossed-token-tossed-token-tossed-token", Path: "/login"}})
	resp, err = client.PostForm(srv.URL+"/login", url.Values{"_csrf": {"tossed-token-tossed-token-tossed-token"}, "name": {"ada"}, "password": {testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("sign-in with a planted unprefixed CSRF cookie over HTTPS answered %d; want 403", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if strings.HasSuffix(c.Name, sessionCookie) && c.Value != "" {
			t.Fatalf("the refused sign-in set a session cookie %s", c.Name)
		}
	}
	// The real token signs in, into a __Host- session cookie.
	resp, err = client.PostForm(srv.URL+"/login", url.Values{"_csrf": {pre.Value}, "name": {"ada"}, "password": {testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "__Host-"+sessionCookie && c.Value != "" && c.Secure && c.Path == "/" && c.Domain == "" {
			return
		}
	}
	t.Fatalf("sign-in over HTTPS answered %d without a __Host-%s cookie: %v", resp.StatusCode, sessionCookie, resp.Cookies())
}

// TestCSRFEndedSessionAsksToSignIn: a form of a session that has since
// ended is refused with the sign-in message (a reload would not help),
// and nothing is saved.
func TestCSRFEndedSessionAsksToSignIn(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	token := ada.csrf("/users")
	u, _ := url.Parse(h.srv.URL)
	for _, c := range ada.client.Jar.Cookies(u) {
		if c.Name == sessionCookie {
			if err := h.store.DeleteSession(context.Background(), hashSecret(c.Value)); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := readPage(t, ada.postRaw("/users", addEve(token)))
	if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "Sign in and try again") {
		t.Fatalf("POST /users after the session ended answered %d; want 401 asking to sign in:\n%.400s", p.status, p.body)
	}
	noEve(t, h)
}
