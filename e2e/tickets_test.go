package e2e

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestSupportUserFindsATicketsRefusalsAndReadsItsTimeline: an agent names
// ticket SUP-4521 in its calls; a support user types the ticket into the
// refusal log, sees only that ticket's refusals (one after a redirect,
// worded so), opens the ticket from a row and reads its timeline: the
// allowed read and both refusals, in order, each refusal linked to its page.
func TestSupportUserFindsATicketsRefusalsAndReadsItsTimeline(t *testing.T) {
	c, admin := adminConsole(t)
	mux := http.NewServeMux()
	mux.Handle("/status", htmlPage(`<title>Status</title><p>All systems operational.</p>`))
	mux.Handle("/go", http.RedirectHandler("http://127.0.0.1:9/after-redirect", http.StatusFound))
	status := serveCounting(t, mux)
	addEntries(t, admin, hostPort(status.URL), "the status page")
	seeBadge(t, admin, "1 ALLOWED")
	token := c.createToken("helpdesk-bot")

	call := func(url, ticket string) fetchAnswer {
		t.Helper()
		var out fetchAnswer
		body := map[string]string{"url": url}
		if ticket != "" {
			body["ticket"] = ticket
		}
		c.callTool(token, "fetch_url", body, &out)
		return out
	}
	if a := call(status.URL+"/status", "SUP-4521"); !a.OK {
		t.Fatalf("the allowlisted status page was refused: %+v", a.Error)
	}
	if a := call("http://127.0.0.1:9/internal", "SUP-4521"); a.OK {
		t.Fatal("a loopback port that is not allowlisted was allowed")
	}
	if a := call(status.URL+"/go", "SUP-4521"); a.OK {
		t.Fatal("a redirect to a loopback port that is not allowlisted was allowed")
	}
	if a := call("http://127.0.0.1:9/other-ticket", "SUP-9999"); a.OK {
		t.Fatal("another ticket's refusal was allowed")
	}
	if a := call("http://127.0.0.1:9/no-ticket", ""); a.OK {
		t.Fatal("a refusal without a ticket was allowed")
	}

	sam := c.addSupportUser("sam")
	gotoUntilCount(t, sam, c.url+"/refusals", `[data-testid="refusal-row"]`, 4)
	fill(t, sam, `[data-testid="refusal-filters"] input[name="ticket"]`, "SUP-4521")
	click(t, sam, `[data-testid="refusal-filters"] button[type="submit"]`)
	if err := expect.Page(sam).ToHaveURL(regexp.MustCompile(`[?&]ticket=SUP-4521`)); err != nil {
		t.Fatalf("the ticket filter is not in the address bar: %v", err)
	}
	seeCount(t, sam, `[data-testid="refusal-row"]`, 2)
	seeCount(t, sam, `[data-testid="refusal-ticket"]:has-text("SUP-4521")`, 2)
	seeCount(t, sam, `[data-testid="refusal-row"]:has-text("other-ticket")`, 0)
	see(t, sam, `[data-testid="refusal-redirected"]`, "Redirected from "+status.URL+"/go to http://127.0.0.1:9/after-redirect.")

	click(t, sam, `[data-testid="refusal-ticket"] a`)
	if err := expect.Page(sam).ToHaveURL(regexp.MustCompile(`/tickets/SUP-4521$`)); err != nil {
		t.Fatalf("the row's ticket does not open its timeline: %v", err)
	}
	see(t, sam, `[data-testid="ticket-id"]`, "SUP-4521")
	events := sam.Locator(`[data-testid="ticket-event"]`)
	if err := expect.Locator(events).ToHaveCount(3); err != nil {
		t.Fatalf("the timeline should hold the ticket's three decisions: %v", err)
	}
	for i, want := range []struct{ outcome, url string }{
		{"allowed", status.URL + "/status"},
		{"refused", "http://127.0.0.1:9/internal"},
		{"refused", "http://127.0.0.1:9/after-redirect"},
	} {
		row := events.Nth(i)
		if err := expect.Locator(row).ToHaveAttribute("data-outcome", want.outcome); err != nil {
			t.Fatalf("event %d should be %s: %v", i, want.outcome, err)
		}
		if err := expect.Locator(row.Locator(`[data-testid="event-url"]`)).ToHaveText(want.url); err != nil {
			t.Fatalf("event %d should be %s: %v", i, want.url, err)
		}
		if err := expect.Locator(row.Locator(`[data-testid="event-tool"]`)).ToContainText("fetch_url"); err != nil {
			t.Fatalf("event %d's tool: %v", i, err)
		}
	}
	see(t, sam, `[data-testid="event-redirected"]`, "Redirected from "+status.URL+"/go")
	seeCount(t, sam, `[data-testid="ticket-event"]:has-text("other-ticket")`, 0)

	// A refusal on the timeline opens its page, which links back.
	click(t, sam, `[data-testid="ticket-event"][data-outcome="refused"] td.refusal-time a`)
	see(t, sam, `[data-testid="detail-url"]`, "http://127.0.0.1:9/internal")
	see(t, sam, `[data-testid="detail-ticket-link"]`, "SUP-4521")
	click(t, sam, `[data-testid="detail-ticket-link"]`)
	if err := expect.Page(sam).ToHaveURL(regexp.MustCompile(`/tickets/SUP-4521$`)); err != nil {
		t.Fatalf("the refusal's page does not link its ticket's timeline: %v", err)
	}

	// The lookup box finds the ticket too.
	mustGoto(t, sam, c.url+"/tickets")
	fill(t, sam, `[data-testid="ticket-lookup"] input[name="ticket"]`, "SUP-4521")
	click(t, sam, `[data-testid="ticket-lookup"] button[type="submit"]`)
	if err := expect.Locator(sam.Locator(`[data-testid="ticket-event"]`)).ToHaveCount(3, playwright.LocatorAssertionsToHaveCountOptions{}); err != nil {
		t.Fatalf("the lookup box does not open the timeline: %v", err)
	}
}
