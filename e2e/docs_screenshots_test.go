package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// docsScreenshotsEnv turns TestDocsScreenshots on. It is off by default so
// that CI never rewrites the committed images.
const docsScreenshotsEnv = "OUTBOUND_DOCS_SCREENSHOTS"

// docsImages is where the user guide's images live, from this package.
const docsImages = "../docs/images"

// The docs' viewport: a common laptop screen, and the size the user guide
// was written against.
const (
	docsWidth  = 1440
	docsHeight = 940
)

// TestDocsScreenshots regenerates the user guide's screenshots from a real
// console filled with realistic data: every refusal in the log is a real
// refused call through the JSON API. Regenerate with
//
//	OUTBOUND_DOCS_SCREENSHOTS=1 bash scripts/test.sh -run TestDocsScreenshots
//
// and look at every image before committing it.
func TestDocsScreenshots(t *testing.T) {
	if os.Getenv(docsScreenshotsEnv) != "1" {
		t.Skipf("writes docs/images; regenerate with %s=1 bash scripts/test.sh -run TestDocsScreenshots", docsScreenshotsEnv)
	}
	c := startConsole(t)
	page := newPageWith(t, c.url, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: docsWidth, Height: docsHeight}})
	c.setupAdmin(page, "ada")
	shot := func(name string) {
		t.Helper()
		path := filepath.Join(docsImages, name)
		if _, err := page.Screenshot(playwright.PageScreenshotOptions{
			Path: playwright.String(path), FullPage: playwright.Bool(false),
			Animations: playwright.ScreenshotAnimationsDisabled, Caret: playwright.ScreenshotCaretHide,
		}); err != nil {
			t.Fatalf("screenshot %s: %v", path, err)
		}
		t.Logf("wrote %s", path)
	}

	mustGoto(t, page, c.url+"/integrations/test?url=https%3A%2F%2F93.184.216.34%2Fstatus")
	seeBadge(t, page, "PUBLIC WEB")
	see(t, page, `[data-testid="test-result"] h3`, "Allowed")
	shot("egress-public-web.png")

	// Refusals under PUBLIC WEB: what the guard refuses whatever the list.
	bots := map[string]string{}
	for _, a := range []string{"helpdesk-bot", "billing-agent", "triage-agent"} {
		bots[a] = c.createToken(a)
	}
	refuse := func(agent, tool, url, thread string) {
		t.Helper()
		var out fetchAnswer
		c.callTool(bots[agent], tool, map[string]string{"url": url, "thread": thread, "trigger": "email"}, &out)
		if out.OK {
			t.Fatalf("%s of %s was allowed; the docs need it refused", tool, url)
		}
	}
	refuse("helpdesk-bot", "fetch_url", "http://169.254.169.254/latest/meta-data/iam/security-credentials/", "HD-4807")
	refuse("triage-agent", "fetch_url", "http://localhost:6379/", "HD-4811")
	refuse("helpdesk-bot", "fetch_url", "http://10.0.0.12/wp-admin/", "HD-4812")
	refuse("billing-agent", "fetch_url", "ftp://files.example.com/invoices/2024-118.pdf", "BL-2201")
	refuse("helpdesk-bot", "fetch_url", "http://0x7f000001/", "HD-4815")
	refuse("triage-agent", "take_screenshot", "http://192.168.1.1/cgi-bin/luci", "HD-4816")
	refuse("billing-agent", "fetch_url", "https://93.184.216.34:8443/export.csv", "BL-2207")
	refuse("helpdesk-bot", "fetch_url", "http://10.20.0.31:8080/tickets/HD-4820", "HD-4820")

	// Four entries with their reasons.
	for _, e := range []struct{ entry, note string }{
		{"status.example.com", "Carrier status page, linked in most delivery tickets"},
		{"*.docs.example.com", "Product docs the agents quote (OPS-88)"},
		{"intranet.corp:8080", "Order portal, read-only account (OPS-91)"},
		{"10.20.0.15", "Returns API behind the VPN (OPS-97)"},
	} {
		addEntries(t, page, e.entry, e.note)
		see(t, page, `[data-testid="flash"]`, "Added 1 entry")
	}
	mustGoto(t, page, c.url+"/integrations/test?url=http%3A%2F%2F10.20.0.15%2Freturns%2FR-7731")
	seeBadge(t, page, "4 ALLOWED")
	see(t, page, `[data-testid="test-result"] h3`, "Allowed")
	shot("egress-allowed.png")

	// Under a list, a host nobody listed is refused too.
	refuse("triage-agent", "fetch_url", "https://pastebin.com/raw/8sK2xQ", "HD-4823")
	refuse("helpdesk-bot", "fetch_url", "https://tracking.parcelhub.example.net/T-99812", "HD-4824")

	row := `[data-testid="refusal-row"]`
	gotoUntilCount(t, page, c.url+"/refusals", row, 10)
	review := func(host, status, comment string) {
		t.Helper()
		mustGoto(t, page, c.url+"/refusals")
		if err := page.Locator(row, playwright.PageLocatorOptions{HasText: host}).Locator("td.refusal-time a").Click(); err != nil {
			t.Fatal(err)
		}
		if err := page.Locator(`input[name="status"][value="` + status + `"]`).Check(); err != nil {
			t.Fatal(err)
		}
		fill(t, page, `[data-testid="review-form"] textarea[name="comment"]`, comment)
		click(t, page, `[data-testid="review-form"] button[type="submit"]`)
		see(t, page, `[data-testid="flash"]`, "marked")
	}
	review("169.254.169.254", "expected", "The link came in a phishing email; the customer was told not to click it.")
	review("pastebin.com", "reviewed", "Spam ticket, closed.")
	mustGoto(t, page, c.url+"/refusals")
	seeCount(t, page, row, 10)
	shot("refusal-log.png")

	if err := page.Locator(row, playwright.PageLocatorOptions{HasText: "169.254.169.254"}).Locator("td.refusal-time a").Click(); err != nil {
		t.Fatal(err)
	}
	see(t, page, `[data-testid="reviewed-by"]`, "by ada")
	shot("refusal-detail.png")

	mustGoto(t, page, c.url+"/refusals")
	if err := page.Locator(row, playwright.PageLocatorOptions{HasText: "10.20.0.31"}).Locator("td.refusal-time a").Click(); err != nil {
		t.Fatal(err)
	}
	click(t, page, `[data-testid="allow-host"]`)
	if err := expect.Locator(page.Locator(`textarea[name="entries"]`)).ToHaveValue("10.20.0.31:8080"); err != nil {
		t.Fatal(err)
	}
	shot("allow-this-host.png")

	svc := serveLoopback(t, orderService())
	addEntries(t, page, hostPort(svc), "Order service for lookup_order")
	see(t, page, `[data-testid="flash"]`, "Added 1 entry")
	createOrderIntegration(t, page, svc)
	fill(t, page, `[data-testid="integration-test"] input[name="sample_order_id"]`, "A-1042")
	click(t, page, `[data-testid="integration-test"] button[type="submit"]`)
	see(t, page, `[data-testid="test-result"] h3`, "200 OK")
	shot("integration-test.png")

	mustGoto(t, page, c.url+"/settings")
	see(t, page, "h1", "Settings")
	shot("settings.png")
}
