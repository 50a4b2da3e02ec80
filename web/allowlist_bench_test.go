package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// BenchmarkAllowlistSaveUntilEnforced measures an admin's add, from the
// POST through the real handler (CSRF, session, role check, parse, one
// transaction, audit, reload) until the running guard enforces the new
// entry. Target: at most 10 ms.
func BenchmarkAllowlistSaveUntilEnforced(b *testing.B) {
	ctx := context.Background()
	// newHarness takes a *testing.T, so the benchmark builds the same
	// console itself: an app over a temporary store, with a table resolver.
	resolver := guardtest.NewResolver()
	a, err := app.Open(ctx, filepath.Join(b.TempDir(), "console.db"), app.Options{
		Resolver: resolver, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: func(string) string { return "" },
	})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	store := a.Store()
	h := &harness{app: a, store: store, guard: a.Guard(), resolver: resolver}
	srv := httptest.NewServer(New(Deps{
		Store: store, Guard: h.guard, Settings: a.Settings, Config: a,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}))
	defer srv.Close()

	hash, _ := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if _, err := store.CreateUser(ctx, models.User{Name: "ada", PasswordHash: string(hash), Role: models.RoleAdmin}); err != nil {
		b.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	token := func(path string) string {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		doc, err := goquery.NewDocumentFromReader(resp.Body)
		if err != nil {
			b.Fatal(err)
		}
		tok, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value")
		if !ok {
			b.Fatalf("%s has no CSRF token (status %d)", path, resp.StatusCode)
		}
		return tok
	}
	post := func(path string, form url.Values) int {
		resp, err := client.PostForm(srv.URL+path, form)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("/login", url.Values{"_csrf": {token("/login")}, "name": {"ada"}, "password": {testPassword}}); code != http.StatusSeeOther {
		b.Fatalf("sign in: %d", code)
	}
	csrf := token("/integrations")

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		host := "host-" + strconv.Itoa(i) + ".example.com"
		h.resolver.Answer(host, "93.184.216.34")
		rev, err := store.Version(ctx, models.SectionAllowlist)
		if err != nil {
			b.Fatal(err)
		}
		form := url.Values{"_csrf": {csrf}, "revision": {strconv.FormatInt(rev, 10)}, "entries": {host}, "note": {"benchmark"}}
		target := "https://" + host + "/"
		b.StartTimer()

		if code := post("/integrations/allowlist", form); code != http.StatusSeeOther {
			b.Fatalf("add %s: status %d", host, code)
		}
		if d := h.guard.Decide(ctx, target); !d.Allowed || !strings.EqualFold(d.Entry.String(), host) {
			b.Fatalf("after the add returned, %s is not enforced: %s", host, d.Message)
		}
	}
}
