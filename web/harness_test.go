package web

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// harness is a console on 127.0.0.1 over a temporary database, with a
// real app (store, guard, integrations) whose resolver is a table, an
// admin "ada" and a support user "sam" (both with password "correct horse
// battery").
type harness struct {
	t        *testing.T
	srv      *httptest.Server
	app      *app.App
	store    *models.Store
	guard    *guard.Guard
	resolver *guardtest.Resolver
	// dialer routes public-looking addresses to loopback servers and
	// refuses the rest: no test reaches past the machine.
	dialer *guardtest.Dialer
	// tls: the console is served over HTTPS (newTLSHarness).
	tls     bool
	reloads atomic.Int32
	setup   *SetupToken
}

const testPassword = "correct horse battery"

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, nil)
}

// newHarnessWith is newHarness with a chance to add to the server's Deps
// (a metrics handler, tool APIs) before it starts.
func newHarnessWith(t *testing.T, more func(*Deps)) *harness {
	t.Helper()
	return newHarnessOn(t, filepath.Join(t.TempDir(), "console.db"), more)
}

// testSecretKey seals integration secrets of a harness on PostgreSQL,
// where the key must be given.
const testSecretKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// newHarnessOn is newHarnessWith on the database target names, which
// another harness may share (replicas).
func newHarnessOn(t *testing.T, target string, more func(*Deps)) *harness {
	t.Helper()
	h := &harness{t: t, resolver: guardtest.NewResolver(), dialer: guardtest.NewDialer()}
	a, err := app.Open(context.Background(), target, app.Options{
		Resolver: h.resolver, Dial: h.dial, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Getenv: func(k string) string {
			if k == "CONSOLE_SECRET_KEY" && models.IsPostgres(target) {
				return testSecretKey
			}
			return ""
		},
		OnReload: func(error) { h.reloads.Add(1) },
		// The lowest bcrypt cost: tests sign in and add users often.
		PasswordCost: bcrypt.MinCost,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	h.reloads.Store(0) // the reload of Open is not one a test made
	h.app, h.store, h.guard = a, a.Store(), a.Guard()
	h.setup, _ = NewSetupToken()
	d := Deps{
		Store: h.store, Guard: h.guard, Setup: h.setup, SignIns: h.store,
		Settings: a.Settings, Config: a, Identity: a, Refusals: a, Tickets: a,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if more != nil {
		more(&d)
	}
	h.srv = httptest.NewServer(New(d))
	t.Cleanup(h.srv.Close)
	return h
}

// reload makes the app reload the store's configuration into the guard,
// as the console does after a change made behind its back.
func (h *harness) reload(ctx context.Context) error { return h.app.Reload(ctx) }

// addUser creates a user directly in the store.
func (h *harness) addUser(name string, role models.Role) {
	h.t.Helper()
	hash, _ := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if _, err := h.store.CreateUser(context.Background(), models.User{Name: name, PasswordHash: string(hash), Role: role}); err != nil {
		h.t.Fatal(err)
	}
}

// browser is a cookie-keeping client that does not follow redirects, so
// tests see each response of a Post/Redirect/Get.
type browser struct {
	h      *harness
	client *http.Client
}

func (h *harness) browser() *browser {
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if h.tls {
		client.Transport = h.srv.Client().Transport
	}
	return &browser{h: h, client: client}
}

// newTLSHarness is newHarness served over HTTPS, where the console's
// cookies are __Host- cookies and Secure.
func newTLSHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	handler := h.srv.Config.Handler
	h.srv.Close()
	h.srv = httptest.NewTLSServer(handler)
	t.Cleanup(h.srv.Close)
	h.tls = true
	return h
}

// signedIn returns a browser signed in as a new user of role.
func (h *harness) signedIn(name string, role models.Role) *browser {
	h.t.Helper()
	h.addUser(name, role)
	b := h.browser()
	resp := b.postForm("/login", url.Values{"name": {name}, "password": {testPassword}})
	if resp.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("sign in as %s: %d", name, resp.StatusCode)
	}
	return b
}

// page is a fetched page: its status, headers, body and parsed document.
type page struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func (b *browser) get(path string) page {
	b.h.t.Helper()
	resp, err := b.client.Get(b.h.srv.URL + path)
	if err != nil {
		b.h.t.Fatal(err)
	}
	return readPage(b.h.t, resp)
}

func readPage(t *testing.T, resp *http.Response) page {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw), doc: doc}
}

// csrf fetches a page of the console and returns the CSRF token of its
// forms, as a browser holding that page would submit it.
func (b *browser) csrf(path string) string {
	b.h.t.Helper()
	p := b.get(path)
	tok, ok := p.doc.Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok {
		b.h.t.Fatalf("%s has no CSRF token (status %d)", path, p.status)
	}
	return tok
}

// postForm submits a form the way a browser does: with the CSRF token of
// the page the form is on (the login page for /login, else /account).
func (b *browser) postForm(path string, form url.Values) *http.Response {
	b.h.t.Helper()
	from := "/account"
	if path == "/login" {
		from = "/login"
	}
	if form.Get("_csrf") == "" {
		form.Set("_csrf", b.csrf(from))
	}
	return b.postRaw(path, form)
}

// postRaw submits form as it is, without adding a CSRF token.
func (b *browser) postRaw(path string, form url.Values) *http.Response {
	b.h.t.Helper()
	resp, err := b.client.PostForm(b.h.srv.URL+path, form)
	if err != nil {
		b.h.t.Fatal(err)
	}
	return resp
}

// post submits a form and reads the response.
func (b *browser) post(path string, form url.Values) page {
	b.h.t.Helper()
	return readPage(b.h.t, b.postForm(path, form))
}

// dial connects loopback addresses (the tests' own servers, reached
// through literal entries) and hands every other address to the routing
// test dialer, which refuses what it has no route for.
func (h *harness) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if host, _, err := net.SplitHostPort(address); err == nil {
		if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
			var d net.Dialer
			return d.DialContext(ctx, network, address)
		}
	}
	return h.dialer.Dial(ctx, network, address)
}
