package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestScopedAccessReportOnlyAndAccessRequests: an admin keeps PUBLIC WEB
// and lets only the order integration reach its internal host; fetch_url
// of that host stays refused for agents while the integration works. A
// report-only entry is tried and switched to enforce with one click. A
// support user files an access request from a refusal and the admin
// approves it, which adds the host for that agent and tool alone.
func TestScopedAccessReportOnlyAndAccessRequests(t *testing.T) {
	c, admin := adminConsole(t)
	svc := serveCounting(t, orderService())
	token := c.createToken("helpdesk-bot")

	// The integration, with "allow this host for this integration only".
	mustGoto(t, admin, c.url+"/integrations/http/new")
	form := `[data-testid="integration-form"] `
	fill(t, admin, form+`input[name="name"]`, "lookup_order")
	fill(t, admin, form+`textarea[name="description"]`, "Look up an order's shipping status by its number.")
	fill(t, admin, form+`input[name="url"]`, svc.URL+"/orders/{order_id}")
	fill(t, admin, form+`input[name="secret_name_0"]`, "X-Api-Key")
	fill(t, admin, form+`input[name="secret_value_0"]`, orderAPIKey)
	fill(t, admin, form+`input[name="param_name_0"]`, "order_id")
	if err := admin.Locator(form + `input[name="allow_host"]`).Check(); err != nil {
		t.Fatal(err)
	}
	click(t, admin, form+`button.primary`)
	if err := expect.Page(admin).ToHaveURL(regexp.MustCompile(`/integrations/http/lookup_order$`)); err != nil {
		t.Fatalf("creating the integration: %v", err)
	}
	see(t, admin, `[data-testid="flash"]`, "is now an internal host for lookup_order alone")
	mustGoto(t, admin, c.url+"/integrations")
	seeBadge(t, admin, "PUBLIC WEB")
	see(t, admin, `[data-testid="allow-entry"]`, "internal host")
	see(t, admin, `[data-testid="allow-entry-who"]`, "lookup_order")

	// fetch_url of the integration's host is still refused, and nothing
	// reached the service; the integration reaches it.
	if a := c.fetchURL(token, svc.URL+"/orders/A-1"); a.OK || a.Error == nil || a.Error.Reason != "internal_address" {
		t.Fatalf("fetch_url of the integration's internal host: %+v", a)
	}
	if n := svc.Hits(); n != 0 {
		t.Fatalf("fetch_url reached the service (%d requests)", n)
	}
	var answer map[string]any
	c.callTool(token, "lookup_order", map[string]string{"order_id": "A-1"}, &answer)
	if svc.Hits() != 1 || answer["ok"] != true {
		t.Fatalf("the integration did not reach its host: %v (service saw %d requests)", answer, svc.Hits())
	}

	// Test a URL as the agent's fetch_url and as the integration.
	mustGoto(t, admin, c.url+"/integrations")
	fill(t, admin, `[data-testid="test-form"] input[name="url"]`, svc.URL+"/orders/A-1")
	fill(t, admin, `[data-testid="test-form"] input[name="agent"]`, "helpdesk-bot")
	fill(t, admin, `[data-testid="test-form"] input[name="tool"]`, "lookup_order")
	click(t, admin, `[data-testid="test-form"] button[type="submit"]`)
	see(t, admin, `[data-testid="test-result"] h3`, "Allowed")
	see(t, admin, `[data-testid="test-reach"]`, "integration lookup_order: PUBLIC WEB · 1 INTERNAL")

	// A report-only entry: PUBLIC WEB stays, the card counts what it
	// would refuse, and Enforce switches the default scope in one click.
	mustGoto(t, admin, c.url+"/integrations")
	fill(t, admin, `[data-testid="allow-form"] textarea[name="entries"]`, "status.example.com")
	if err := admin.Locator(`[data-testid="allow-form"] input[name="report_only"]`).Check(); err != nil {
		t.Fatal(err)
	}
	click(t, admin, `[data-testid="allow-form"] button[type="submit"]`)
	see(t, admin, `[data-testid="flash"]`, "report-only")
	seeBadge(t, admin, "PUBLIC WEB · 1 REPORT-ONLY")
	see(t, admin, `[data-testid="would-refuse-summary"]`, "in the last 7 days would have been refused")
	click(t, admin, `[data-testid="would-refuse-summary"] a`)
	// They are in the refusal log, under its own outcome tab.
	if err := expect.Page(admin).ToHaveURL(regexp.MustCompile(`/refusals\?outcome=would_refuse$`)); err != nil {
		t.Fatalf("See them: %v", err)
	}
	see(t, admin, `[data-testid="outcome-would-refuse"][aria-current="page"]`, "Would refuse")
	see(t, admin, `[data-testid="would-refuse-page-summary"]`, "would have been refused")
	mustGoto(t, admin, c.url+"/integrations")
	click(t, admin, `[data-testid="allow-enforce"]`)
	see(t, admin, `[data-testid="flash"]`, "now reach only the listed hosts")
	seeBadge(t, admin, "1 ALLOWED")

	// A support user turns a refusal into an access request.
	if a := c.fetchURL(token, svc.URL+"/orders/A-2"); a.OK {
		t.Fatal("fetch_url of the service was allowed")
	}
	sam := c.addSupportUser("sam")
	row := `[data-testid="refusal-row"]`
	gotoUntilCount(t, sam, c.url+"/refusals", row, 2)
	if err := sam.Locator(row, playwright.PageLocatorOptions{HasText: "/orders/A-2"}).Locator("td.refusal-time a").Click(); err != nil {
		t.Fatal(err)
	}
	fill(t, sam, `[data-testid="request-access"] textarea[name="comment"]`, "Ticket HD-311: the bot must read order pages.")
	click(t, sam, `[data-testid="request-access-submit"]`)
	see(t, sam, `[data-testid="flash"]`, "Access requested")
	see(t, sam, `[data-testid="detail-status"]`, "Needs access")

	// The admin approves it from the card: prefilled with the host, the
	// agent and the tool.
	mustGoto(t, admin, c.url+"/integrations")
	see(t, admin, `[data-testid="access-request"]`, "Ticket HD-311")
	req := `[data-testid="access-request"] `
	if v, _ := admin.Locator(req + `input[name="entry"]`).InputValue(); v != hostPort(svc.URL) {
		t.Fatalf("the approval's entry is %q, want %q", v, hostPort(svc.URL))
	}
	if v, _ := admin.Locator(req + `input[name="agents"]`).InputValue(); v != "helpdesk-bot" {
		t.Fatalf("the approval's agent is %q", v)
	}
	click(t, admin, `[data-testid="access-approve"]`)
	see(t, admin, `[data-testid="flash"]`, "Approved access request")
	seeCount(t, admin, `[data-testid="access-request"]`, 0)

	hits := svc.Hits()
	if a := c.fetchURL(token, svc.URL+"/orders/A-3"); svc.Hits() != hits+1 {
		t.Fatalf("after the approval fetch_url still does not reach the service: %+v", a)
	}
	other := c.createToken("other-bot")
	if a := c.fetchURL(other, svc.URL+"/orders/A-4"); a.OK || svc.Hits() != hits+1 {
		t.Fatalf("another agent reaches the host approved for helpdesk-bot: %+v", a)
	}
	mustGoto(t, sam, c.url+"/refusals")
	gotoUntilCount(t, sam, c.url+"/refusals?status=reviewed", row, 1)
}
