package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/outboundhq/outbound/models"
)

func forwardedTestServer(t *testing.T, d Deps) *Server {
	t.Helper()
	store, err := models.Open(filepath.Join(t.TempDir(), "console.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	d.Store, d.Log = store, slog.New(slog.NewTextHandler(io.Discard, nil))
	return New(d)
}

// csrfCookieOf is the pre-session CSRF cookie GET /login sets for req.
func csrfCookieOf(t *testing.T, s *Server, req *http.Request) *http.Cookie {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /login (Host %s): %d %s", req.Host, rec.Code, rec.Body)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == preSessionCSRFCookie || c.Name == "__Host-"+preSessionCSRFCookie {
			return c
		}
	}
	t.Fatalf("GET /login set no CSRF cookie: %v", rec.Result().Cookies())
	return nil
}

// TestPublicURLMakesCookiesSecureBehindATLSProxy: TLS ends at a proxy, so
// the console sees plain HTTP; an https --public-url still makes its
// cookies Secure and __Host-, and its host is a name the console answers.
func TestPublicURLMakesCookiesSecureBehindATLSProxy(t *testing.T) {
	s := forwardedTestServer(t, Deps{PublicURL: &url.URL{Scheme: "https", Host: "console.example.com"}})
	req := httptest.NewRequest("GET", "http://console.example.com/login", nil)
	c := csrfCookieOf(t, s, req)
	if c.Name != "__Host-"+preSessionCSRFCookie || !c.Secure {
		t.Fatalf("cookie behind an https public URL: %+v, want __Host- and Secure", c)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "http://rebind.evil.example/login", nil))
	if rec.Code != http.StatusMisdirectedRequest {
		t.Fatalf("another host: %d, want 421", rec.Code)
	}

	plain := forwardedTestServer(t, Deps{})
	if c := csrfCookieOf(t, plain, httptest.NewRequest("GET", "http://127.0.0.1/login", nil)); c.Secure || c.Name != preSessionCSRFCookie {
		t.Fatalf("plain HTTP without a public URL: %+v, want a plain cookie", c)
	}
}

// TestForwardedHeadersCountOnlyFromTrustedProxies: X-Forwarded-For and
// X-Forwarded-Proto from a peer outside --trusted-proxy (loopback
// included, by default) are ignored; from a trusted proxy they give the
// client's address (the sign-in throttle's source) and the scheme.
func TestForwardedHeadersCountOnlyFromTrustedProxies(t *testing.T) {
	forged := func(peer string) *http.Request {
		req := httptest.NewRequest("GET", "http://127.0.0.1/login", nil)
		req.RemoteAddr = peer
		req.Header.Set("X-Forwarded-For", "203.0.113.9")
		req.Header.Set("X-Forwarded-Proto", "https")
		return req
	}
	none := forwardedTestServer(t, Deps{})
	if got := none.IPExtractor(forged("127.0.0.1:5000")); got != "127.0.0.1" {
		t.Errorf("no trusted proxy: client %s, want the peer 127.0.0.1", got)
	}
	if c := csrfCookieOf(t, none, forged("127.0.0.1:5000")); c.Secure {
		t.Errorf("no trusted proxy: X-Forwarded-Proto made the cookie Secure: %+v", c)
	}

	s := forwardedTestServer(t, Deps{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")}})
	if got := s.IPExtractor(forged("127.0.0.1:5000")); got != "127.0.0.1" {
		t.Errorf("untrusted loopback peer: client %s, want the peer 127.0.0.1", got)
	}
	if got := s.IPExtractor(forged("192.0.2.7:5000")); got != "192.0.2.7" {
		t.Errorf("untrusted peer: client %s, want the peer 192.0.2.7", got)
	}
	if c := csrfCookieOf(t, s, forged("192.0.2.7:5000")); c.Secure {
		t.Errorf("untrusted peer: X-Forwarded-Proto made the cookie Secure: %+v", c)
	}
	if got := s.IPExtractor(forged("10.0.0.5:5000")); got != "203.0.113.9" {
		t.Errorf("trusted proxy: client %s, want 203.0.113.9 from X-Forwarded-For", got)
	}
	if c := csrfCookieOf(t, s, forged("10.0.0.5:5000")); !c.Secure || c.Name != "__Host-"+preSessionCSRFCookie {
		t.Errorf("trusted proxy saying https: %+v, want __Host- and Secure", c)
	}
}
