package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// ticketLog seeds refusals of two tickets and none, and one allowed
// decision of SUP-7, and waits until the decision is stored.
func ticketLog(t *testing.T, h *harness) logFixture {
	t.Helper()
	at := func(m int) time.Time { return past.Add(time.Duration(m) * time.Minute) }
	names := []string{"sup7-internal", "sup8-timeout", "sup7-redirect", "mcp-none", "hash-ticket"}
	f := seedLog(t, h, names, []models.Refusal{
		{Time: at(1), Tool: "fetch_url", Agent: "helpdesk", Ticket: "SUP-7", Thread: "T-7", Host: "crm.intranet.corp", URL: "https://CRM.intranet.corp/Orders", Code: "forbidden", Reason: "internal_name", Message: "crm.intranet.corp is an internal name."},
		{Time: at(2), Tool: "fetch_url", Agent: "helpdesk", Ticket: "SUP-8", Host: "slow.example.com", URL: "https://slow.example.com/", Code: "timeout", Reason: "timeout", Kind: "network", Message: "The request took too long."},
		{Time: at(3), Tool: "fetch_url", Agent: "helpdesk", Ticket: "SUP-7", Host: "10.0.0.1", URL: "http://10.0.0.1/admin", Code: "forbidden", Reason: "internal_address",
			Redirects: models.StringList{"https://short.example/s/abc"}, Message: "10.0.0.1 is a private address."},
		{Time: at(4), Tool: "fetch_url", Agent: "bot", Thread: tools.MCPThreadPrefix + "Q2JHSXK4ZP", Host: "x.example", URL: "https://x.example/", Code: "forbidden", Reason: "not_allowlisted"},
		{Time: at(5), Tool: "fetch_url", Agent: "bot", Ticket: "#77", Host: "y.example", URL: "https://y.example/", Code: "forbidden", Reason: "not_allowlisted"},
	})
	h.guard.Record(guard.Record{Time: at(2), Caller: guard.Caller{Tool: "fetch_url", Agent: "helpdesk", Ticket: "SUP-7"}, URL: "https://status.example.com/", Host: "status.example.com", Port: 443})
	deadline := time.Now().Add(10 * time.Second)
	for {
		rows, _, err := h.store.DecisionsOfTicket(t.Context(), "SUP-7", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatal("the allowed decision was never stored")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRefusalLogFindsATicketAndSearches: the log filters by ticket and
// searches URLs and messages in any case; each row shows its ticket,
// linked to the timeline, or a thread a person named, never an MCP
// session's id; a redirect is worded in the row.
func TestRefusalLogFindsATicketAndSearches(t *testing.T) {
	h := newHarness(t)
	f := ticketLog(t, h)
	b := h.signedIn("sam", models.RoleSupport)

	p := b.get("/refusals?ticket=SUP-7")
	if got, want := rowIDs(t, p), f.want("sup7-redirect", "sup7-internal"); !slices.Equal(got, want) {
		t.Fatalf("ticket SUP-7: rows %v, want %v", got, want)
	}
	link, _ := p.doc.Find(`[data-testid="refusal-ticket"] a`).First().Attr("href")
	if link != "/tickets/SUP-7" || p.doc.Find(`[data-testid="refusal-redirected"]`).Text() != "Redirected from https://short.example/s/abc to http://10.0.0.1/admin." {
		t.Fatalf("row ticket link %q, redirect %q", link, p.doc.Find(`[data-testid="refusal-redirected"]`).Text())
	}
	if v, _ := p.doc.Find(`input[name="ticket"]`).Attr("value"); v != "SUP-7" {
		t.Fatalf("the ticket field reads %q", v)
	}

	all := b.get("/refusals")
	if strings.Contains(all.body, "Q2JHSXK4ZP") {
		t.Fatal("the log shows an MCP session id")
	}
	if link, _ := all.doc.Find(`a[href="/tickets/%2377"]`).Attr("href"); link == "" {
		t.Fatalf("the ticket #77 is not linked with its # escaped:\n%s", all.doc.Find(`[data-testid="refusal-ticket"]`).Text())
	}

	for q, want := range map[string][]int64{
		"crm.INTRANET":        f.want("sup7-internal"),
		"short.example":       f.want("sup7-redirect"),
		"took LONG":           f.want("sup8-timeout"),
		"private no-such-one": nil,
	} {
		p := b.get("/refusals?" + url.Values{"q": {q}}.Encode())
		if got := rowIDs(t, p); !slices.Equal(got, want) || p.status != 200 {
			t.Errorf("search %q: %d rows %v, want %v", q, p.status, got, want)
		}
	}
	p = b.get("/refusals?" + url.Values{"q": {"SUP"}, "ticket": {"SUP-8"}}.Encode())
	if got := rowIDs(t, p); len(got) != 0 {
		t.Errorf("search within a ticket: %v", got)
	}

	bad := b.get("/refusals?" + url.Values{"ticket": {"SUP 7 <b>"}, "q": {"a b c d e f g h i"}}.Encode())
	if bad.status != 400 || len(rowIDs(t, bad)) != 0 ||
		!strings.Contains(bad.doc.Find(`[data-testid="filter-error-ticket"]`).Text(), guard.TicketExample) ||
		!strings.Contains(bad.doc.Find(`[data-testid="filter-error-q"]`).Text(), "at most 8") {
		t.Fatalf("bad ticket and search: %d %q %q", bad.status, bad.doc.Find(`[data-testid="filter-error-ticket"]`).Text(), bad.doc.Find(`[data-testid="filter-error-q"]`).Text())
	}
	if v, _ := bad.doc.Find(`input[name="ticket"]`).Attr("value"); v != "SUP 7 <b>" {
		t.Fatalf("the mistyped ticket was not kept: %q", v)
	}
}

// TestTicketPageShowsItsTimeline: a ticket's page lists its allowed and
// refused decisions in time order, each refusal linked to its page, and
// nothing of other tickets; the refusal's page links back to it.
func TestTicketPageShowsItsTimeline(t *testing.T) {
	h := newHarness(t)
	f := ticketLog(t, h)
	b := h.signedIn("sam", models.RoleSupport)

	p := b.get("/tickets/SUP-7")
	if p.status != 200 {
		t.Fatalf("ticket page: %d", p.status)
	}
	var got []string
	p.doc.Find(`[data-testid="ticket-event"]`).Each(func(_ int, s *goquery.Selection) {
		got = append(got, s.AttrOr("data-outcome", "")+" "+s.Find(`[data-testid="event-url"]`).Text())
	})
	want := []string{"refused https://CRM.intranet.corp/Orders", "allowed https://status.example.com/", "refused http://10.0.0.1/admin"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("timeline %q, want %q", got, want)
	}
	href, _ := p.doc.Find(`[data-testid="ticket-event"] a`).First().Attr("href")
	if !strings.HasPrefix(href, "/refusals/"+strconv.FormatInt(f.ids["sup7-internal"], 10)) {
		t.Fatalf("the first refusal links to %q", href)
	}
	if c := p.doc.Find(`[data-testid="ticket-counts"]`).Text(); !strings.Contains(c, "1 allowed") || !strings.Contains(c, "2 refused") {
		t.Fatalf("counts %q", c)
	}
	if !strings.Contains(p.doc.Find(`[data-testid="event-redirected"]`).Text(), "Redirected from https://short.example/s/abc to http://10.0.0.1/admin.") {
		t.Fatal("the timeline does not word the redirect")
	}

	d := b.get("/refusals/" + strconv.FormatInt(f.ids["sup7-redirect"], 10))
	if link, _ := d.doc.Find(`[data-testid="detail-ticket-link"]`).Attr("href"); link != "/tickets/SUP-7" {
		t.Fatalf("the refusal's page links the ticket to %q", link)
	}
	if r := d.doc.Find(`[data-testid="detail-redirected"]`).Text(); r != "Redirected from https://short.example/s/abc to http://10.0.0.1/admin." {
		t.Fatalf("the refusal's page words the redirect as %q", r)
	}
	if s := b.get("/refusals/" + strconv.FormatInt(f.ids["mcp-none"], 10)); !strings.Contains(s.doc.Find(`[data-testid="detail-thread"]`).Text(), "an MCP session") {
		t.Fatal("an MCP session's thread is not marked as one")
	}

	hash := b.get("/tickets/%2377")
	if hash.status != 200 || hash.doc.Find(`[data-testid="ticket-event"]`).Length() != 1 || hash.doc.Find(`[data-testid="ticket-id"]`).Text() != "#77" {
		t.Fatalf("ticket #77: %d, %d events", hash.status, hash.doc.Find(`[data-testid="ticket-event"]`).Length())
	}
	none := b.get("/tickets/SUP-404")
	if none.status != 200 || none.doc.Find(`[data-testid="ticket-empty"]`).Length() != 1 {
		t.Fatalf("an unknown ticket: %d", none.status)
	}
}

// TestTicketLookup: the lookup box goes to a ticket's page, and keeps a
// malformed ticket in the box with what is wrong and how to write it.
func TestTicketLookup(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("sam", models.RoleSupport)
	resp, err := b.client.Get(h.srv.URL + "/tickets?ticket=SUP-7")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/tickets/SUP-7" {
		t.Fatalf("lookup: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	p := b.get("/tickets?" + url.Values{"ticket": {"SUP 7"}}.Encode())
	if v, _ := p.doc.Find(`input[name="ticket"]`).Attr("value"); p.status != 400 || v != "SUP 7" ||
		!strings.Contains(p.doc.Find(`[data-testid="ticket-problem"]`).Text(), guard.TicketExample) {
		t.Fatalf("a malformed ticket: %d %q %q", p.status, v, p.doc.Find(`[data-testid="ticket-problem"]`).Text())
	}
	if p := b.get("/tickets/a%20b"); p.status != 404 {
		t.Fatalf("a malformed ticket's page: %d", p.status)
	}
	if p := h.browser().get("/tickets/SUP-7"); p.status == 200 {
		t.Fatal("a ticket's timeline is shown to someone not signed in")
	}
}
