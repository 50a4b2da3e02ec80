package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/models"
)

// TestSessionCookieIsSecureUnderTLS: served over TLS, the session cookie
// is marked Secure, so a browser never sends it over plain HTTP.
func TestSessionCookieIsSecureUnderTLS(t *testing.T) {
	srv, client := newTLSConsole(t)
	resp, err := client.Get(srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(body)
	if m == nil {
		t.Fatal("no CSRF token on the sign-in page")
	}
	resp, err = client.PostForm(srv.URL+"/login", url.Values{"_csrf": {string(m[1])}, "name": {"ada"}, "password": {testPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "__Host-"+sessionCookie {
			if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
				t.Fatalf("session cookie under TLS: %+v", c)
			}
			return
		}
	}
	t.Fatalf("no session cookie (status %d)", resp.StatusCode)
}

// newTLSConsole serves the console over TLS with one admin, ada, and
// returns a client that trusts it, keeps cookies and does not follow
// redirects.
func newTLSConsole(t *testing.T) (*httptest.Server, *http.Client) {
	t.Helper()
	store, err := models.Open(filepath.Join(t.TempDir(), "console.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	hash, _ := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if _, err := store.CreateUser(t.Context(), models.User{Name: "ada", PasswordHash: string(hash), Role: models.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(New(Deps{Store: store, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	client := srv.Client()
	client.Jar = jar
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return srv, client
}

// TestFlashShowsOnceUnderTLS: a notice left for the next page is shown
// on that page and gone from the one after, over HTTPS as over HTTP. The
// flash cookie used to be set under its plain name and cleared under its
// __Host- name, so over HTTPS it was never cleared and every later page
// repeated it.
func TestFlashShowsOnceUnderTLS(t *testing.T) {
	for _, tls := range []bool{false, true} {
		h := newHarness(t)
		if tls {
			h = newTLSHarness(t)
		}
		ada := h.signedIn("ada", models.RoleAdmin)
		if res := addEntries(t, ada, "status.example.com", "ticket 7"); res.status != http.StatusSeeOther {
			t.Fatalf("tls %v: add: status %d", tls, res.status)
		}
		if flash := ada.get("/integrations").doc.Find(`[data-testid="flash"]`).Text(); !strings.Contains(flash, "Added 1 entry: status.example.com") {
			t.Fatalf("tls %v: the page after the change shows flash %q", tls, flash)
		}
		for _, path := range []string{"/integrations", "/"} {
			if n := ada.get(path).doc.Find(`[data-testid="flash"]`).Length(); n != 0 {
				t.Fatalf("tls %v: %s still shows the flash on the next load", tls, path)
			}
		}
		for _, c := range ada.client.Jar.Cookies(mustURL(t, h.srv.URL)) {
			if strings.Contains(c.Name, flashCookie) {
				t.Errorf("tls %v: the browser still holds cookie %s", tls, c.Name)
			}
		}
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
