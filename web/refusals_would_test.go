package web

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

// seedWould stores would-be refusals, newest last.
func seedWould(t *testing.T, h *harness, rows ...models.WouldRefusal) {
	t.Helper()
	if err := h.store.InsertWouldRefusals(t.Context(), rows); err != nil {
		t.Fatal(err)
	}
}

func wouldRow(agent, tool, integration, ticket, host string) models.WouldRefusal {
	return models.WouldRefusal{Time: time.Now().Add(-time.Hour), Tool: tool, Integration: integration, Agent: agent, Ticket: ticket,
		URL: "https://" + host + "/path", Host: host, Port: 443, Code: "forbidden", Reason: "not_allowlisted", Message: host + " is not on the outbound allowlist."}
}

// wouldHosts is the host column of the would-refuse view's rows.
func wouldHosts(p page) []string {
	var out []string
	p.doc.Find(`[data-testid="would-refuse-row"] [data-testid="refusal-host"]`).Each(func(_ int, s *goquery.Selection) { out = append(out, s.Text()) })
	return out
}

// TestRefusalLogWouldRefuseOutcome: the refusal log's second tab shows the
// requests report-only entries would have refused, apart from the
// refusals, with the card's summary, the shared filters, the reason, and
// an explained error for the filters that cannot apply.
func TestRefusalLogWouldRefuseOutcome(t *testing.T) {
	h := newHarness(t)
	seedWould(t, h,
		wouldRow("helpdesk", "fetch_url", "", "", "news.example.net"),
		wouldRow("helpdesk", "call_integration", "crm", "", "crm.example.com"),
		wouldRow("billing-bot", "fetch_url", "", "SUP-7", "status.example.org"),
	)
	seedLog(t, h, []string{"refused"}, []models.Refusal{{Time: time.Now(), Tool: "fetch_url", Agent: "helpdesk", Host: "refused.example", URL: "https://refused.example/", Code: "forbidden", Reason: "not_allowlisted"}})
	sam := h.signedIn("sam", models.RoleSupport)

	p := sam.get("/refusals?outcome=would_refuse")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	if got := wouldHosts(p); !slices.Equal(got, []string{"status.example.org", "crm.example.com", "news.example.net"}) {
		t.Fatalf("rows %v", got)
	}
	if n := p.doc.Find(`[data-testid="refusal-row"]`).Length(); n != 0 {
		t.Fatalf("a refusal is listed among the would-be refusals (%d rows)", n)
	}
	if got := p.doc.Find(`[data-testid="would-refuse-page-summary"]`).Text(); !strings.Contains(got, "3 requests from 2 agents in the last 7 days would have been refused") {
		t.Fatalf("summary %q", got)
	}
	if cur := p.doc.Find(`[data-testid="outcome-would-refuse"]`).AttrOr("aria-current", ""); cur != "page" {
		t.Fatal("the would-refuse tab is not the current one")
	}
	if p.doc.Find(`[data-testid="would-refuse-enforce"]`).Length() != 0 {
		t.Fatal("support staff are offered Enforce")
	}
	if p.doc.Find(`select[name="status"]`).Length() != 0 || p.doc.Find(`[data-testid="refusal-pick"]`).Length() != 0 {
		t.Fatal("the would-refuse view offers reviews")
	}
	if got := p.doc.Find(`[data-testid="would-refuse-row"] [data-testid="refusal-reason"]`).First().Text(); got != "not_allowlisted" {
		t.Fatalf("reason %q", got)
	}
	if got := p.doc.Find(`[data-testid="refusal-integration"]`).Text(); got != "crm" {
		t.Fatalf("integration column %q", got)
	}
	if opts := p.doc.Find(`select[name="tool"]`).Text(); !strings.Contains(opts, "integration:crm") || !strings.Contains(opts, "call_integration") {
		t.Fatalf("the would-refuse view's tool menu: %q", opts)
	}
	if opts := p.doc.Find(`select[name="agent"]`).Text(); !strings.Contains(opts, "billing-bot") {
		t.Fatalf("the would-refuse view's agent menu: %q", opts)
	}

	for q, want := range map[string][]string{
		"tool=integration:crm": {"crm.example.com"},
		"agent=billing-bot":    {"status.example.org"},
		"ticket=SUP-7":         {"status.example.org"},
		"host=NEWS":            {"news.example.net"},
		"q=CRM.example path":   {"crm.example.com"},
		"tool=fetch_url":       {"status.example.org", "news.example.net"},
	} {
		got := wouldHosts(sam.get("/refusals?outcome=would_refuse&" + strings.ReplaceAll(q, " ", "+")))
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}

	// Filters that do not apply are explained, and no rows pass for
	// "everything".
	p = sam.get("/refusals?outcome=would_refuse&status=expected&agent=helpdesk")
	if p.status != http.StatusBadRequest || !strings.Contains(p.doc.Find(`[data-testid="filter-error-status"]`).Text(), "does not apply to would-be refusals") ||
		len(wouldHosts(p)) != 0 {
		t.Fatalf("status filter on would-be refusals: %d %q", p.status, p.doc.Find(`[data-testid="filter-error-status"]`).Text())
	}
	if got := p.doc.Find(`select[name="agent"] option[selected]`).AttrOr("value", ""); got != "helpdesk" {
		t.Fatalf("the typed agent was lost: %q", got)
	}
	p = sam.get("/refusals?outcome=maybe")
	if p.status != http.StatusBadRequest || !strings.Contains(p.doc.Find(`[data-testid="filter-problem"]`).Text(), "Outcome") {
		t.Fatalf("a bad outcome: %d %q", p.status, p.doc.Find(`[data-testid="filter-problem"]`).Text())
	}

	// The tabs carry the shared filters, not the refusal-only ones.
	p = sam.get("/refusals?agent=helpdesk&code=forbidden")
	if cur := p.doc.Find(`[data-testid="outcome-refused"]`).AttrOr("aria-current", ""); cur != "page" {
		t.Fatal("the refused tab is not the current one")
	}
	if href := p.doc.Find(`[data-testid="outcome-would-refuse"]`).AttrOr("href", ""); href != "/refusals?agent=helpdesk&outcome=would_refuse" {
		t.Fatalf("the would-refuse tab links to %q", href)
	}
	if ids := rowIDs(t, p); len(ids) != 1 {
		t.Fatalf("the refused view shows %d rows", len(ids))
	}

	// Admins are offered Enforce.
	ada := h.signedIn("ada", models.RoleAdmin)
	if ada.get("/refusals?outcome=would_refuse").doc.Find(`[data-testid="would-refuse-enforce"]`).Length() != 1 {
		t.Fatal("admins are not offered Enforce")
	}
}

// TestRefusalLogWouldRefusePagesAndExports: keyset pages with no row twice
// or missed, a CSV of the filtered view, and the old report-only page
// leading to the view.
func TestRefusalLogWouldRefusePagesAndExports(t *testing.T) {
	h := newHarness(t)
	var rows []models.WouldRefusal
	for i := range 60 {
		rows = append(rows, wouldRow("helpdesk", "fetch_url", "", "", fmt.Sprintf("h%02d.example.net", i)))
	}
	rows[10].Agent, rows[10].URL = "=cmd", "=HYPERLINK(\"x\")"
	seedWould(t, h, rows...)
	sam := h.signedIn("sam", models.RoleSupport)

	var seen []string
	path := "/refusals?outcome=would_refuse"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("the pages do not end")
		}
		p := sam.get(path)
		seen = append(seen, wouldHosts(p)...)
		path = p.doc.Find(`[data-testid="page-older"]`).AttrOr("href", "")
		if path != "" && !strings.Contains(path, "outcome=would_refuse") {
			t.Fatalf("Older › leaves the view: %s", path)
		}
	}
	if len(seen) != 60 || seen[0] != "h59.example.net" || seen[59] != "h00.example.net" || len(slices.Compact(slices.Clone(seen))) != 60 {
		t.Fatalf("pages gave %d rows: %v", len(seen), seen)
	}

	p := sam.get("/refusals.csv?outcome=would_refuse&host=h1")
	if p.status != http.StatusOK || !strings.Contains(p.header.Get("Content-Disposition"), "would-refuse-") {
		t.Fatalf("export: %d %v", p.status, p.header)
	}
	recs, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], wouldRefusalCSVHeader) || len(recs) != 11 {
		t.Fatalf("CSV: header %v, %d records", recs[0], len(recs))
	}
	col := func(rec []string, name string) string { return rec[slices.Index(wouldRefusalCSVHeader, name)] }
	for _, rec := range recs[1:] {
		if col(rec, "outcome") != "would_refuse" || col(rec, "reason") != "not_allowlisted" || !strings.HasPrefix(col(rec, "host"), "h1") {
			t.Fatalf("CSV record %v", rec)
		}
		if col(rec, "host") == "h10.example.net" && (col(rec, "agent") != "'=cmd" || !strings.HasPrefix(col(rec, "url"), "'=")) {
			t.Fatalf("a formula is not defused: %v", rec)
		}
	}
	if p := sam.get("/refusals.csv?outcome=would_refuse&status=expected"); p.status != http.StatusBadRequest {
		t.Fatalf("an export with a filter that does not apply: %d", p.status)
	}

	resp, err := sam.client.Get(h.srv.URL + "/integrations/report-only?agent=helpdesk")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusMovedPermanently || loc != "/refusals?agent=helpdesk&outcome=would_refuse" {
		t.Fatalf("the old page: %d %q", resp.StatusCode, loc)
	}
}

// TestRefusalLogNamesTheIntegration: a refusal of an integration's call
// shows the integration in the row, on its page and in the CSV, and the
// tool menu offers integration:NAME, which filters on it.
func TestRefusalLogNamesTheIntegration(t *testing.T) {
	h := newHarness(t)
	f := seedLog(t, h, []string{"crm", "billing", "fetch"}, []models.Refusal{
		{Time: time.Now(), Tool: "call_integration", Integration: "crm", Agent: "bot", Host: "crm.example.com", URL: "https://crm.example.com/", Code: "forbidden", Reason: "not_allowlisted",
			RemedyKind: "add_entry", RemedyValue: "crm.example.com"},
		{Time: time.Now(), Tool: "call_integration", Integration: "billing", Agent: "bot", Host: "crm.example.com", URL: "https://crm.example.com/", Code: "forbidden", Reason: "not_allowlisted"},
		{Time: time.Now(), Tool: "fetch_url", Agent: "bot", Host: "crm.example.com", URL: "https://crm.example.com/", Code: "forbidden", Reason: "not_allowlisted"},
	})
	sam := h.signedIn("sam", models.RoleSupport)
	p := sam.get("/refusals")
	if opts := p.doc.Find(`select[name="tool"]`).Text(); !strings.Contains(opts, "integration:crm") || !strings.Contains(opts, "integration:billing") {
		t.Fatalf("the tool menu: %q", opts)
	}
	p = sam.get("/refusals?tool=integration:crm")
	if ids := rowIDs(t, p); len(ids) != 1 || ids[0] != f.ids["crm"] || p.doc.Find(`[data-testid="refusal-integration"]`).Text() != "crm" {
		t.Fatalf("tool=integration:crm: %v", ids)
	}
	if p := sam.get("/refusals?tool=integration:"); p.status != http.StatusBadRequest || !strings.Contains(p.doc.Find(`[data-testid="filter-error-tool"]`).Text(), "integration:NAME") {
		t.Fatalf("an empty integration: %d", p.status)
	}
	d := sam.get(fmt.Sprintf("/refusals/%d", f.ids["crm"]))
	if got := d.doc.Find(`[data-testid="detail-integration"]`).Text(); got != "crm" {
		t.Fatalf("detail integration %q", got)
	}
	if got := d.doc.Find(`[data-testid="request-access-for"]`).Text(); !strings.Contains(got, "integration crm (and no other tool)") {
		t.Fatalf("Request access says %q", got)
	}
	if d := sam.get(fmt.Sprintf("/refusals/%d", f.ids["fetch"])); d.doc.Find(`[data-testid="detail-integration"]`).Length() != 0 {
		t.Fatal("fetch_url's refusal names an integration")
	}
	recs, err := csv.NewReader(strings.NewReader(sam.get("/refusals.csv?tool=integration:billing").body)).ReadAll()
	if err != nil || len(recs) != 2 || recs[1][slices.Index(refusalCSVHeader, "integration")] != "billing" {
		t.Fatalf("CSV: %v %v", recs, err)
	}
}
