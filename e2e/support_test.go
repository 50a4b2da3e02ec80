package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// onlyAdmins is the 403 sentence every admin-only route answers a
// support user with; the CSRF refusal reads differently, so a test can
// tell which check stopped a request.
const onlyAdmins = "Only admins can do this"

// TestSupportUserSeesNoEditControlsAndCannotForgeChanges signs in a
// support user: the allowlist and a refusal are read-only for them, the
// admin pages answer 403, and POSTs they forge, with a valid CSRF token,
// are refused by the role check and change nothing.
func TestSupportUserSeesNoEditControlsAndCannotForgeChanges(t *testing.T) {
	c, admin := adminConsole(t)
	addEntries(t, admin, "status.example.com", "ticket 4711")
	seeBadge(t, admin, "1 ALLOWED")
	token := c.createToken("helpdesk-bot")
	if a := c.fetchURL(token, "http://127.0.0.1:9/internal"); a.OK {
		t.Fatal("fetch_url of a loopback URL that is not allowlisted was allowed")
	}

	sam := c.addSupportUser("sam")

	t.Run("integrations read-only", func(t *testing.T) {
		mustGoto(t, sam, c.url+"/integrations")
		seeBadge(t, sam, "1 ALLOWED")
		seeCount(t, sam, `[data-testid="allow-entry"]`, 1)
		seeCount(t, sam, `[data-testid="egress-readonly"]`, 1)
		seeCount(t, sam, `[data-testid="allow-form"]`, 0)
		seeCount(t, sam, `form[action="/integrations/allowlist/remove"]`, 0)
		seeCount(t, sam, `button:has-text("Remove")`, 0)
		seeCount(t, sam, `a[href="/integrations/http/new"]`, 0)
		// Testing a URL is reading, so support may.
		seeCount(t, sam, `[data-testid="test-form"]`, 1)
	})

	t.Run("refusal detail without Allow this host", func(t *testing.T) {
		gotoUntilCount(t, sam, c.url+"/refusals", `[data-testid="refusal-row"]`, 1)
		click(t, sam, `[data-testid="refusal-row"] td.refusal-time a`)
		see(t, sam, `[data-testid="detail-host"]`, "127.0.0.1")
		seeCount(t, sam, `[data-testid="review-form"]`, 1)
		seeCount(t, sam, `[data-testid="allow-host"]`, 0)
	})

	t.Run("admin pages forbidden", func(t *testing.T) {
		for _, path := range []string{"/settings", "/users", "/agents", "/audit", "/integrations/http/new", "/integrations/allow?refusal=1"} {
			t.Run(path, func(t *testing.T) {
				resp := mustGoto(t, sam, c.url+path)
				if resp.Status() != http.StatusForbidden {
					t.Fatalf("GET %s as support answered %d, want 403", path, resp.Status())
				}
				see(t, sam, "h1", "Not allowed")
				see(t, sam, "main", onlyAdmins)
			})
		}
	})

	t.Run("forged posts refused", func(t *testing.T) {
		// The page's own request context shares sam's session cookie and,
		// sending no Sec-Fetch-Site, gets a real CSRF token with the page.
		req := sam.Request()
		csrf := csrfTokenOf(t, req, c.url+"/integrations")
		forged := []struct {
			path string
			form map[string]any
		}{
			{"/integrations/allowlist", map[string]any{"entries": "evil.example.com", "note": "", "revision": "0"}},
			{"/integrations/allowlist/remove", map[string]any{"entry": "status.example.com", "revision": "0", "confirmed": "yes"}},
			{"/settings", map[string]any{"timeout": "60s"}},
			{"/agents", map[string]any{"name": "sams-bot"}},
		}
		for _, f := range forged {
			t.Run(f.path, func(t *testing.T) {
				f.form["_csrf"] = csrf
				resp, err := req.Post(c.url+f.path, playwright.APIRequestContextPostOptions{Form: f.form, MaxRedirects: playwright.Int(0)})
				if err != nil {
					t.Fatalf("POST %s: %v", f.path, err)
				}
				body, err := resp.Text()
				if err != nil {
					t.Fatal(err)
				}
				if resp.Status() != http.StatusForbidden || !regexp.MustCompile(onlyAdmins).MatchString(body) {
					t.Fatalf("a support user's POST %s with a valid CSRF token answered %d; want 403 %q:\n%.400s", f.path, resp.Status(), onlyAdmins, body)
				}
			})
		}

		// The same from inside the page: a same-origin fetch with the
		// page's own token passes the Origin and token checks, so only the
		// role check is left.
		got, err := sam.Evaluate(`async () => {
			const csrf = document.querySelector('input[name="_csrf"]').value;
			const r = await fetch("/integrations/allowlist", {method: "POST", body: new URLSearchParams({_csrf: csrf, entries: "evil.example.com", revision: "0"})});
			return r.status + " " + await r.text();
		}`)
		if err != nil {
			t.Fatalf("same-origin fetch from the support page: %v", err)
		}
		if s, _ := got.(string); !strings.HasPrefix(s, "403 ") || !regexp.MustCompile(onlyAdmins).MatchString(s) {
			t.Fatalf("a support user's same-origin POST answered %.400v; want 403 %q", got, onlyAdmins)
		}
	})

	// Nothing changed: the admin still sees the one entry, and no token.
	mustGoto(t, admin, c.url+"/integrations")
	seeBadge(t, admin, "1 ALLOWED")
	see(t, admin, `[data-testid="allow-entry-text"]`, "status.example.com")
	mustGoto(t, admin, c.url+"/agents")
	see(t, admin, "main", "helpdesk-bot")
	seeCount(t, admin, `main :text("sams-bot")`, 0)
}

// csrfTokenOf loads path with req (no Sec-Fetch-Site, so the console
// issues a real token and its cookie) and returns the page's CSRF token.
func csrfTokenOf(t *testing.T, req playwright.APIRequestContext, pageURL string) string {
	t.Helper()
	resp, err := req.Get(pageURL)
	if err != nil {
		t.Fatalf("GET %s: %v", pageURL, err)
	}
	body, err := resp.Text()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status() != http.StatusOK {
		t.Fatalf("GET %s answered %d", pageURL, resp.Status())
	}
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s has no CSRF token", pageURL)
	}
	return m[1]
}

// TestSupportReviewsARefusal marks a refusal Needs access with a comment
// as a support user, finds it by that status, and sees who reviewed it.
func TestSupportReviewsARefusal(t *testing.T) {
	c, admin := adminConsole(t)
	token := c.createToken("helpdesk-bot")
	for _, u := range []string{"http://127.0.0.1:9/portal/orders", "http://169.254.169.254/latest/meta-data/"} {
		if a := c.fetchURL(token, u); a.OK {
			t.Fatalf("fetch_url of %s was allowed", u)
		}
	}
	sam := c.addSupportUser("sam")
	row := `[data-testid="refusal-row"]`
	gotoUntilCount(t, sam, c.url+"/refusals", row, 2)
	seeCount(t, sam, row+` [data-testid="refusal-status"]:text("Unreviewed")`, 2)

	loopRow := sam.Locator(row, playwright.PageLocatorOptions{HasText: "127.0.0.1"})
	if err := loopRow.Locator("td.refusal-time a").Click(); err != nil {
		t.Fatal(err)
	}
	const comment = "Our order portal; the agent needs it for ticket HD-311."
	if err := sam.Locator(`input[name="status"][value="needs_access"]`).Check(); err != nil {
		t.Fatal(err)
	}
	fill(t, sam, `[data-testid="review-form"] textarea[name="comment"]`, comment)
	click(t, sam, `[data-testid="review-form"] button[type="submit"]`)
	see(t, sam, `[data-testid="flash"]`, "marked Needs access")
	see(t, sam, `[data-testid="detail-status"]`, "Needs access")
	see(t, sam, `[data-testid="reviewed-by"]`, "by sam")
	see(t, sam, `[data-testid="review-comment"]`, comment)

	// Filtering by that status finds it, and only it; the filter lives in
	// the URL, so the view can be shared.
	mustGoto(t, sam, c.url+"/refusals")
	if _, err := sam.Locator(`select[name="status"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"needs_access"}}); err != nil {
		t.Fatal(err)
	}
	click(t, sam, `[data-testid="refusal-filters"] button[type="submit"]`)
	if err := expect.Page(sam).ToHaveURL(regexp.MustCompile(`[?&]status=needs_access(&|$)`)); err != nil {
		t.Fatal(err)
	}
	seeCount(t, sam, row, 1)
	see(t, sam, row, "127.0.0.1")
	see(t, sam, row+` [data-testid="refusal-status"]`, "Needs access")

	mustGoto(t, sam, c.url+"/refusals?"+url.Values{"status": {"unreviewed"}}.Encode())
	seeCount(t, sam, row, 1)
	see(t, sam, row, "169.254.169.254")

	// The admin sees who reviewed it, through the shared link.
	mustGoto(t, admin, c.url+"/refusals?status=needs_access")
	seeCount(t, admin, row, 1)
	click(t, admin, row+` td.refusal-time a`)
	see(t, admin, `[data-testid="reviewed-by"]`, "Needs access · by sam")
	see(t, admin, `[data-testid="review-comment"]`, comment)
}
