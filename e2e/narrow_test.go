package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// narrowShots, when set, is a folder that receives a full-page picture of
// every page the narrow-screen test checks, for a person to look at.
const narrowShotsEnv = "OUTBOUND_NARROW_SHOTS"

// seedNarrow fills a console with what makes narrow layouts break: long
// host names in the refusal log, long notes on the allowlist.
func seedNarrow(t *testing.T, c *console, ada playwright.Page) {
	t.Helper()
	mustGoto(t, ada, c.url+"/integrations")
	addEntries(t, ada, "status.example.com\n*.docs.example.com\nintranet.corp:8080\ntracking.parcelhub.example.net", "Carrier status pages, linked in most delivery tickets (OPS-88)")
	see(t, ada, `[data-testid="flash"]`, "Added 4 entries")
	bot := c.createToken("helpdesk-bot")
	var out fetchAnswer
	for _, u := range []string{"https://customer-portal.eu-west-1.shop-backend.example.org/orders/77812",
		"http://169.254.169.254/latest/meta-data/", "https://pastebin.com/raw/8sK2xQ"} {
		c.callTool(bot, "fetch_url", map[string]string{"url": u}, &out)
	}
	gotoUntilCount(t, ada, c.url+"/refusals", `[data-testid="refusal-row"]`, 3)
}

// noSidewaysScroll asserts that the page is no wider than the window.
func noSidewaysScroll(t *testing.T, page playwright.Page, path string) {
	t.Helper()
	got, err := page.Evaluate(`() => [document.documentElement.scrollWidth, window.innerWidth]`)
	if err != nil {
		t.Fatal(err)
	}
	w := got.([]any)
	if toInt(w[0]) > toInt(w[1]) {
		t.Errorf("%s is %v px wide in a %v px window: it scrolls sideways", path, w[0], w[1])
	}
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return -1
}

func narrowShot(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	dir := os.Getenv(narrowShotsEnv)
	if dir == "" {
		return
	}
	path := filepath.Join(dir, name+".png")
	if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path), FullPage: playwright.Bool(true)}); err != nil {
		t.Errorf("screenshot %s: %v", path, err)
	}
}

func TestNarrowScreens(t *testing.T) {
	c, ada := adminConsole(t)
	seedNarrow(t, c, ada)

	// 800 px: the refusal log keeps its Review column, and hosts whole.
	if err := ada.SetViewportSize(800, 900); err != nil {
		t.Fatal(err)
	}
	mustGoto(t, ada, c.url+"/refusals")
	if ok, err := ada.Locator(`table.refusals th:has-text("Review")`).IsVisible(); err != nil || !ok {
		t.Errorf("at 800 px the Review column is hidden (%v)", err)
	}
	if ok, _ := ada.Locator(`[data-testid="refusal-status"]`).First().IsVisible(); !ok {
		t.Error("at 800 px the rows' review status is hidden")
	}
	cut, err := ada.Locator(`[data-testid="refusal-host"]`).EvaluateAll(`cells => cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent)`)
	if err != nil {
		t.Fatal(err)
	}
	if len(cut.([]any)) > 0 {
		t.Errorf("at 800 px these hosts are cut: %v", cut)
	}
	noSidewaysScroll(t, ada, "/refusals at 800 px")
	narrowShot(t, ada, "refusals-800")

	// 390 px: the allowlist reads as lines, not one character per line,
	// and no page scrolls sideways.
	if err := ada.SetViewportSize(390, 844); err != nil {
		t.Fatal(err)
	}
	mustGoto(t, ada, c.url+"/integrations")
	widths, err := ada.Locator(`.allow-table td:first-child`).EvaluateAll(`cells => cells.map(c => c.getBoundingClientRect().width)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range widths.([]any) {
		if toInt(w) < 250 {
			t.Errorf("at 390 px an allowlist entry cell is %v px wide; it wraps a character per line", w)
		}
	}
	pages := []string{"/overview", "/integrations", "/integrations/test?url=status.example.com", "/integrations/http", "/integrations/http/new",
		"/refusals", "/refusals/1", "/refusals/2", "/preview", "/agents", "/users", "/settings", "/audit", "/account"}
	for _, p := range pages {
		mustGoto(t, ada, c.url+p)
		noSidewaysScroll(t, ada, p+" at 390 px")
		narrowShot(t, ada, "390"+strings.NewReplacer("/", "-", "?", "-", "=", "-").Replace(p))
	}
	// The preview's result too.
	mustGoto(t, ada, c.url+"/preview")
	fill(t, ada, `#preview-url`, "http://169.254.169.254/latest/meta-data/")
	click(t, ada, `[data-testid="preview-form"] button[type="submit"]`)
	see(t, ada, `[data-testid="preview-reason"]`, "metadata")
	noSidewaysScroll(t, ada, "/preview result at 390 px")
	narrowShot(t, ada, "390-preview-refused")
}

// The Test a URL result comes back in view, below a long allowlist.
func TestTestURLResultStaysInView(t *testing.T) {
	c, ada := adminConsole(t)
	var entries []string
	for i := range 60 {
		entries = append(entries, "host"+strings.Repeat("x", i%7)+"-"+string(rune('a'+i%26))+strconv.Itoa(i)+".example.com")
	}
	mustGoto(t, ada, c.url+"/integrations")
	addEntries(t, ada, strings.Join(entries, "\n"), "")
	see(t, ada, `[data-testid="flash"]`, "Added 60 entries")
	fill(t, ada, `#test-url`, "status.example.com")
	click(t, ada, `[data-testid="test-form"] button[type="submit"]`)
	if err := expect.Locator(ada.Locator(`[data-testid="test-result"]`)).ToBeInViewport(); err != nil {
		t.Fatalf("the Test a URL result is out of view after submitting: %v", err)
	}
	see(t, ada, `[data-testid="test-suggest"]`, "https://status.example.com/")
}

// An integration saved on a host the allowlist does not name warns, the
// list flags it, and the flag's fix opens the add form filled in.
func TestIntegrationOnARefusedHostIsFlagged(t *testing.T) {
	c, ada := adminConsole(t)
	svc := serveCounting(t, orderService())
	mustGoto(t, ada, c.url+"/integrations")
	addEntries(t, ada, "status.example.com", "")
	see(t, ada, `[data-testid="flash"]`, "Added 1 entry")
	createOrderIntegration(t, ada, svc.URL)
	see(t, ada, `[data-testid="flash"]`, "cannot call it yet")
	click(t, ada, `a[href="/integrations/http"]`)
	see(t, ada, `[data-testid="integration-host-refused"]`, "Host refused")
	click(t, ada, `[data-testid="integration-host-fix"]`)
	if err := expect.Locator(ada.Locator(`textarea[name="entries"]`)).ToHaveValue(hostPort(svc.URL)); err != nil {
		t.Fatal(err)
	}
	if err := expect.Locator(ada.Locator(`[data-testid="allow-form"]`)).ToBeInViewport(); err != nil {
		t.Fatal(err)
	}
	click(t, ada, `[data-testid="allow-form"] button[type="submit"]`)
	see(t, ada, `[data-testid="flash"]`, "Added 1 entry")
	mustGoto(t, ada, c.url+"/integrations/http")
	seeCount(t, ada, `[data-testid="integration-host-refused"]`, 0)
	if svc.Hits() != 0 {
		t.Fatalf("saving and listing called the service %d times", svc.Hits())
	}
}
