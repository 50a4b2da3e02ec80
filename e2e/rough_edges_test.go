package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// shotsEnv names a directory to write this test's screenshots to, at 1440
// and 390 px, for a person to look at; unset, none are taken.
const shotsEnv = "OUTBOUND_ROUGH_EDGE_SHOTS"

// TestRoughEdgesInTheBrowser covers what only a browser shows: the skip
// link is the first tab stop and moves focus to the content; app.js adds
// a parameter row and filters the allowlist without a request, and leaves
// empty fields out of a filter link; and the pages that changed, at a
// laptop's width and a phone's.
func TestRoughEdgesInTheBrowser(t *testing.T) {
	c := startConsole(t)
	page := newPageWith(t, c.url, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 1440, Height: 940}})
	shots := os.Getenv(shotsEnv)
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		for _, w := range []int{1440, 390} {
			if err := page.SetViewportSize(w, 940); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(shots, name+"-"+map[int]string{1440: "1440", 390: "390"}[w]+".png")
			if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path), FullPage: playwright.Bool(true)}); err != nil {
				t.Fatalf("screenshot %s: %v", path, err)
			}
		}
		if err := page.SetViewportSize(1440, 940); err != nil {
			t.Fatal(err)
		}
	}

	mustGoto(t, page, c.url+"/login")
	see(t, page, `[data-testid="setup-needed"]`, "Setup is needed")
	shot("login-fresh")
	c.setupAdmin(page, "ada")
	mustGoto(t, page, c.setup)
	see(t, page, `[data-testid="setup-used"]`, "Sign in")
	shot("setup-used")

	t.Run("skip link", func(t *testing.T) {
		mustGoto(t, page, c.url+"/refusals")
		if err := page.Keyboard().Press("Tab"); err != nil {
			t.Fatal(err)
		}
		focused, err := page.Evaluate(`() => document.activeElement.className + "|" + document.activeElement.getAttribute("href")`)
		if err != nil || focused != "skip-link|#main" {
			t.Fatalf("first tab stop %v (%v), want the skip link", focused, err)
		}
		box, err := page.Locator(".skip-link").BoundingBox()
		if err != nil || box == nil || box.Y < 0 {
			t.Fatalf("the focused skip link is not on screen: %+v %v", box, err)
		}
		if err := page.Keyboard().Press("Enter"); err != nil {
			t.Fatal(err)
		}
		if id, _ := page.Evaluate(`() => document.activeElement.id`); id != "main" {
			t.Fatalf("after the skip link, focus is on %v, not the content", id)
		}
	})

	t.Run("allowlist search", func(t *testing.T) {
		addEntries(t, page, "host10.example.com\nhost2.example.com\nhost1.example.com\ndocs.partner.net", "ticket 4711")
		seeBadge(t, page, "4 ALLOWED")
		texts, err := page.Locator(`[data-testid="allow-entry-text"]`).AllTextContents()
		if err != nil || strings.Join(texts, " ") != "docs.partner.net host1.example.com host2.example.com host10.example.com" {
			t.Fatalf("order %q %v", texts, err)
		}
		before := page.URL()
		fill(t, page, `#allow-q`, "host1")
		seeCount(t, page, `[data-testid="allow-entry"]:visible`, 2)
		if page.URL() != before {
			t.Errorf("typing in the search navigated to %s", page.URL())
		}
		if err := page.Locator(`[data-testid="allow-pick"]:visible`).First().Check(); err != nil {
			t.Fatal(err)
		}
		shot("allowlist-search")
		fill(t, page, `#allow-q`, "")
		seeCount(t, page, `[data-testid="allow-entry"]:visible`, 4)
		mustGoto(t, page, c.url+"/integrations/allowlist/note?entry=host2.example.com")
		shot("allowlist-note")
		mustGoto(t, page, c.url+"/integrations")
		page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
		for _, e := range []string{"host1.example.com", "host2.example.com"} {
			if err := page.Locator(`[data-testid="allow-pick"][value="` + e + `"]`).Check(); err != nil {
				t.Fatal(err)
			}
		}
		click(t, page, `[data-testid="allow-bulk"] button`)
		see(t, page, `[data-testid="flash"]`, "Removed 2 entries")
		seeBadge(t, page, "2 ALLOWED")
	})

	t.Run("allowlist search typed before app.js runs", func(t *testing.T) {
		// Found when a loaded machine ran app.js after the search was
		// typed: its input event had gone by, and the rows stayed
		// unfiltered. A slow network, or the browser putting a form back
		// on Back, does the same. Here app.js is held until the text is in.
		let := holdAppJS(t, page)
		gotoParsed(t, page, c.url+"/integrations")
		fill(t, page, `#allow-q`, "docs")
		if n, err := page.Locator(`[data-testid="allow-entry"]:visible`).Count(); err != nil || n != 2 {
			t.Fatalf("%d entries visible before app.js ran (%v); the test wants both", n, err)
		}
		let()
		seeCount(t, page, `[data-testid="allow-entry"]:visible`, 1)
	})

	t.Run("add a parameter in place", func(t *testing.T) {
		mustGoto(t, page, c.url+"/integrations/http/new")
		seeCount(t, page, `[data-testid="param-row"].row-blank`, 3)
		fill(t, page, `input[name="param_name_0"]`, "order_id")
		requests := 0
		page.OnRequest(func(playwright.Request) { requests++ })
		for i := 0; i < 2; i++ {
			click(t, page, `[data-testid="add-param"]`)
		}
		seeCount(t, page, `[data-testid="param-row"]`, 5)
		if v, _ := page.Locator(`input[name="param_rows"]`).InputValue(); v != "5" {
			t.Errorf("param_rows %q, want 5", v)
		}
		if requests != 0 {
			t.Errorf("adding rows made %d requests", requests)
		}
		if v, _ := page.Locator(`input[name="param_name_0"]`).InputValue(); v != "order_id" {
			t.Errorf("typed name lost: %q", v)
		}
		shot("integration-params")
	})

	t.Run("a parameter typed before app.js runs", func(t *testing.T) {
		let := holdAppJS(t, page)
		gotoParsed(t, page, c.url+"/integrations/http/new")
		fill(t, page, `input[name="param_name_0"]`, "order_id")
		let()
		// The load comes after app.js ran: then the row typed in is not
		// blank, and the two others still are.
		if err := page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad}); err != nil {
			t.Fatal(err)
		}
		seeCount(t, page, `[data-testid="param-row"].row-blank`, 2)
	})

	t.Run("boxes to tick keep their size", func(t *testing.T) {
		// Found in a screenshot: every checkbox took a field's full width,
		// so the browser drew it centred in an empty stripe, on a line of
		// its own above its text (the allowlist's scope, an integration's
		// "Allow this host").
		for _, path := range []string{"/integrations", "/integrations/http/new"} {
			mustGoto(t, page, c.url+path)
			boxes, err := page.Locator(`main input[type="checkbox"]:visible`).All()
			if err != nil || len(boxes) == 0 {
				t.Fatalf("%s: no checkboxes (%v)", path, err)
			}
			for _, box := range boxes {
				b, err := box.BoundingBox()
				name, _ := box.GetAttribute("name")
				if err != nil || b == nil || b.Width > 32 {
					t.Errorf("%s: checkbox %q is %+v wide (%v); want its own size, beside its text", path, name, b, err)
				}
			}
		}
	})

	t.Run("filter links and bulk review", func(t *testing.T) {
		token := c.createToken("helpdesk-bot")
		for _, u := range []string{"https://blocked-one.example/", "https://blocked-two.example/"} {
			if a := c.fetchURL(token, u); a.OK {
				t.Fatalf("%s was allowed", u)
			}
		}
		mustGoto(t, page, c.url+"/refusals")
		fill(t, page, `[data-testid="refusal-filters"] input[name="host"]`, "blocked")
		click(t, page, `[data-testid="refusal-filters"] button[type="submit"]`)
		if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/refusals\?host=blocked$`)); err != nil {
			t.Fatalf("filter link: %v", err)
		}
		seeCount(t, page, `[data-testid="refusal-row"]`, 2)
		for i := 0; i < 2; i++ {
			if err := page.Locator(`[data-testid="refusal-pick"]`).Nth(i).Check(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := page.Locator(`[data-testid="refusal-bulk"] select[name="verdict"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"needs_access"}}); err != nil {
			t.Fatal(err)
		}
		shot("refusals-bulk")
		click(t, page, `[data-testid="refusal-bulk"] button`)
		see(t, page, `[data-testid="flash"]`, "2 refusals marked Needs access")
		if u, _ := url.Parse(page.URL()); u.RawQuery != "host=blocked" {
			t.Errorf("after the review: %s, want the same filtered log", page.URL())
		}
		seeCount(t, page, `[data-testid="refusal-status"]:has-text("Needs access")`, 2)
	})

	t.Run("audit filters", func(t *testing.T) {
		mustGoto(t, page, c.url+"/audit")
		if _, err := page.Locator(`[data-testid="audit-filters"] select[name="action"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"allowlist.remove"}}); err != nil {
			t.Fatal(err)
		}
		click(t, page, `[data-testid="audit-filters"] button[type="submit"]`)
		if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/audit\?action=allowlist\.remove$`)); err != nil {
			t.Fatalf("audit filter link: %v", err)
		}
		seeCount(t, page, `[data-testid="audit-row"]`, 2)
		shot("audit-filters")
	})

	t.Run("token page reload", func(t *testing.T) {
		mustGoto(t, page, c.url+"/agents")
		fill(t, page, `[data-testid="agent-form"] input[name="name"]`, "billing-bot")
		click(t, page, `form[action="/agents"] button[type="submit"]`)
		see(t, page, `[data-testid="new-token"]`, "obt_")
		resp, err := page.Reload()
		if err != nil || resp.Status() != 410 {
			t.Fatalf("reload: %v %v", resp, err)
		}
		see(t, page, `[data-testid="token-shown"]`, "billing-bot")
		shot("token-shown")
	})
}
