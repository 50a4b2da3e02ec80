package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// orderPage is the internal page the agent needs: a help-desk order
// lookup on loopback, which the guard refuses until it is allowlisted.
const orderPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Order A-1042</title></head>
<body><main><h1>Order A-1042</h1>
<p>Shipped on Tuesday with the courier; expected delivery Thursday before noon.</p>
</main></body></html>`

// TestRefusedFetchAllowedFromTheLogWithoutRestart is the console's key
// scenario: a real fetch_url call to a loopback page is refused, the
// refusal shows in the log, the admin allows its host from there, and the
// very same call succeeds against the same console process.
func TestRefusedFetchAllowedFromTheLogWithoutRestart(t *testing.T) {
	c, page := adminConsole(t)
	orders := serveCounting(t, htmlPage(orderPage))
	target := hostPort(orders.URL) // 127.0.0.1:PORT
	url := orders.URL + "/orders/A-1042"
	token := c.createToken("helpdesk-bot")

	refused := c.fetchURL(token, url)
	if refused.OK || refused.Error == nil || refused.Error.Code != "forbidden" || refused.Error.Reason != "internal_address" {
		t.Fatalf("fetch_url of %s before allowing: %+v, want refused forbidden/internal_address", url, refused)
	}
	if n := orders.Hits(); n != 0 {
		t.Fatalf("the refused call reached the loopback page %d times", n)
	}

	// The refusal is in the log, with its host.
	row := `[data-testid="refusal-row"]`
	gotoUntilCount(t, page, c.url+"/refusals", row, 1)
	see(t, page, row, "127.0.0.1")
	see(t, page, row, "helpdesk-bot")
	see(t, page, row+` [data-testid="refusal-reason"]`, "internal_address")
	click(t, page, row+` td.refusal-time a`)
	see(t, page, `[data-testid="detail-url"]`, url)
	see(t, page, `[data-testid="detail-host"]`, "127.0.0.1")
	see(t, page, `[data-testid="detail-tool"]`, "fetch_url")
	see(t, page, `[data-testid="detail-agent"]`, "helpdesk-bot")
	see(t, page, `[data-testid="detail-fix"]`, target)

	// Allow this host: the form comes prefilled with the literal entry,
	// and says what becomes reachable.
	click(t, page, `[data-testid="allow-host"]`)
	if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/integrations/allow\?refusal=\d+$`)); err != nil {
		t.Fatal(err)
	}
	see(t, page, `[data-testid="allow-origin"]`, url)
	seeCount(t, page, `[data-testid="allow-preview"]`, 1)
	// Under PUBLIC WEB the host is offered as an internal host, which
	// keeps every other agent's public web.
	see(t, page, `[data-testid="allow-mode-change"]`, "stays on PUBLIC WEB")
	if err := expect.Locator(page.Locator(`textarea[name="entries"]`)).ToHaveValue(target); err != nil {
		t.Fatalf("the entry should be prefilled with the literal %s: %v", target, err)
	}
	if err := expect.Locator(page.Locator(`input[name="note"]`)).ToHaveValue(regexp.MustCompile(`^Allowed from refusal #\d+ \(` + regexp.QuoteMeta(url) + `\) by ada$`)); err != nil {
		t.Fatalf("the note should record where the entry came from: %v", err)
	}
	if n := orders.Hits(); n != 0 {
		t.Fatalf("opening Allow this host reached the page %d times; the preview must only decide", n)
	}
	click(t, page, `[data-testid="allow-form"] button[type="submit"]`)
	see(t, page, `[data-testid="flash"]`, "Added 1 entry: "+target+".")
	seeBadge(t, page, "PUBLIC WEB · 1 INTERNAL")
	see(t, page, `[data-testid="allow-entry-note"]`, "Allowed from refusal #")

	// The same call, the same console process: it works now.
	allowed := c.fetchURL(token, url)
	if !allowed.OK || allowed.Error != nil {
		t.Fatalf("fetch_url of %s after Allow this host: %+v, want ok", url, allowed)
	}
	if allowed.Status != 200 || allowed.Title != "Order A-1042" || !strings.Contains(allowed.Text, "Shipped on Tuesday") {
		t.Fatalf("fetch_url after allowing answered status %d, title %q, text %q", allowed.Status, allowed.Title, allowed.Text)
	}
	if n := orders.Hits(); n != 1 {
		t.Fatalf("the loopback page got %d hits after allowing, want exactly 1", n)
	}
}
