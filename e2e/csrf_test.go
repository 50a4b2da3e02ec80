package e2e

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestPostWithoutCSRFRefused sends an admin's allowlist change without a
// CSRF token, with a wrong one, and from a page on another site; each is
// refused and nothing is saved. A control request with the right token
// then succeeds, so the refusals are the CSRF check's doing.
func TestPostWithoutCSRFRefused(t *testing.T) {
	c, page := adminConsole(t)
	// The page's request context carries ada's session cookie but, unlike
	// the page, sends no Sec-Fetch-Site: only the token can vouch for it.
	req := page.Request()
	signedIn, err := req.Get(c.url+"/integrations", playwright.APIRequestContextGetOptions{MaxRedirects: playwright.Int(0)})
	if err != nil {
		t.Fatal(err)
	}
	if signedIn.Status() != http.StatusOK {
		t.Fatalf("the request context is not signed in: GET /integrations answered %d", signedIn.Status())
	}

	post := func(t *testing.T, form map[string]any) (int, string) {
		t.Helper()
		resp, err := req.Post(c.url+"/integrations/allowlist", playwright.APIRequestContextPostOptions{Form: form, MaxRedirects: playwright.Int(0)})
		if err != nil {
			t.Fatal(err)
		}
		body, err := resp.Text()
		if err != nil {
			t.Fatal(err)
		}
		return resp.Status(), body
	}
	for _, tt := range []struct {
		name string
		form map[string]any
	}{
		{"no token", map[string]any{"entries": "evil.example.com", "note": "", "revision": "0"}},
		{"wrong token", map[string]any{"_csrf": "not-the-token", "entries": "evil.example.com", "note": "", "revision": "0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, tt.form)
			if status != http.StatusForbidden || !strings.Contains(body, "missing its security token") {
				t.Fatalf("POST without a valid CSRF token answered %d; want 403 naming the token:\n%.400s", status, body)
			}
		})
	}

	t.Run("cross-site form", func(t *testing.T) {
		// localhost and 127.0.0.1 are different sites to the browser: the
		// form arrives with Sec-Fetch-Site: cross-site and, the session
		// cookie being SameSite=Lax, without the session.
		attacker := serveLoopback(t, htmlPage(`<!doctype html><html><head><title>You won a prize</title></head><body>
<form id="f" method="post" action="`+html.EscapeString(c.url)+`/integrations/allowlist">
<input type="hidden" name="entries" value="evil.example.com"><input type="hidden" name="revision" value="0">
</form><script>document.getElementById("f").submit();</script></body></html>`))
		attackerURL := strings.Replace(attacker, "127.0.0.1", "localhost", 1)
		resp, err := page.ExpectResponse(regexp.MustCompile(`/integrations/allowlist$`), func() error {
			_, err := page.Goto(attackerURL)
			return err
		})
		if err != nil {
			t.Fatalf("the cross-site form never reached the console: %v", err)
		}
		if s := resp.Status(); s != http.StatusForbidden && !(s == http.StatusSeeOther && strings.Contains(resp.Headers()["location"], "/login")) {
			t.Fatalf("a cross-site form post answered %d (Location %q); want 403 or a redirect to sign in", s, resp.Headers()["location"])
		}
	})

	mustGoto(t, page, c.url+"/integrations")
	seeBadge(t, page, "PUBLIC WEB")
	seeCount(t, page, `[data-testid="allow-entry"]`, 0)

	// Control: the same request with the page's real token is accepted.
	csrf := csrfTokenOf(t, req, c.url+"/integrations")
	status, body := post(t, map[string]any{"_csrf": csrf, "entries": "status.example.com", "note": "control", "revision": currentRevision(t, req, c.url)})
	if status != http.StatusSeeOther {
		t.Fatalf("the control POST with a valid token answered %d:\n%.400s", status, body)
	}
	mustGoto(t, page, c.url+"/integrations")
	seeBadge(t, page, "1 ALLOWED")
	see(t, page, `[data-testid="allow-entry-text"]`, "status.example.com")
}

var revisionField = regexp.MustCompile(`name="revision" value="(\d+)"`)

// currentRevision reads the revision the add form would send.
func currentRevision(t *testing.T, req playwright.APIRequestContext, base string) string {
	t.Helper()
	resp, err := req.Get(base + "/integrations")
	if err != nil {
		t.Fatal(err)
	}
	body, err := resp.Text()
	if err != nil {
		t.Fatal(err)
	}
	m := revisionField.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the Integrations page has no revision field")
	}
	return m[1]
}
