package web

import (
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// TestRefusalIsOneValueFromGuardToPageAndCSV follows one refusal through
// the product: the guard refuses a redirect into the network, the tool
// answer, the stored row, the detail page and the CSV all show the same
// remedy, kind, addresses and redirect chain, lists as lists.
func TestRefusalIsOneValueFromGuardToPageAndCSV(t *testing.T) {
	start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://wiki.intranet.corp/hr?a=1,2", http.StatusFound)
	}))
	t.Cleanup(start.Close)
	first := start.URL + "/start"
	var refused *guard.Refusal
	h := newHarnessWith(t, func(d *Deps) {
		ctx := t.Context()
		rev, err := d.Store.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The loopback start page is listed literally; the wildcard admits
		// wiki.intranet.corp's name but never its private addresses.
		entries := []models.AllowlistEntry{{Entry: start.Listener.Addr().String()}, {Entry: "*.intranet.corp"}}
		if _, err := d.Store.(*models.Store).AddAllowlistEntries(ctx, rev, entries); err != nil {
			t.Fatal(err)
		}
		resolver := guardtest.NewResolver()
		resolver.Answer("wiki.intranet.corp", "10.1.2.3", "fd00::7")
		a, err := app.Open(ctx, d.Store.(*models.Store).Path(), app.Options{Resolver: resolver})
		if err != nil {
			t.Fatal(err)
		}
		gctx := guard.WithCaller(ctx, guard.Caller{Tool: "fetch_url", Agent: "helpdesk", Thread: "T-1"})
		if _, err := a.Guard().Get(gctx, first); err != nil {
			refused, _ = guard.AsRefusal(err)
		}
		if err := a.Close(); err != nil { // flushes the refusal to the log
			t.Fatal(err)
		}
	})
	if refused == nil {
		t.Fatal("the redirect into the private network was not refused")
	}
	wantAddrs := []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::7")}
	if refused.Reason != guard.ReasonInternalAddress || refused.Remedy != guard.AddEntry("wiki.intranet.corp") ||
		!slices.Equal(refused.Addresses, wantAddrs) || !slices.Equal(refused.Redirects, []string{first}) ||
		refused.Port != 80 || refused.Tool != "fetch_url" || refused.Agent != "helpdesk" ||
		!strings.Contains(refused.Fix, "as a literal entry under Integrations → Outbound web access") {
		t.Fatalf("the guard's refusal: %+v", refused)
	}

	// The agent reads the same value as an agent may: internal, ask an
	// admin; the entry stays on the admin's surfaces below.
	ans := tools.RefusalAnswer("fetch_url", refused)
	for _, want := range []string{"Redirected from " + first + " to http://wiki.intranet.corp/", "Fix: " + guard.AgentInternalFix} {
		if !strings.Contains(ans, want) {
			t.Errorf("tool answer lacks %q:\n%s", want, ans)
		}
	}
	if strings.Contains(ans, "An admin can help") || strings.Contains(ans, "literal entry") {
		t.Errorf("tool answer names the entry that would open an internal host:\n%s", ans)
	}

	rows, _, err := h.store.ListRefusals(t.Context(), models.RefusalQuery{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("log has %d rows (%v), want the one refusal", len(rows), err)
	}
	logged := app.LoggedRefusalOf(rows[0])
	want := *refused
	want.Kind, want.Range = guard.KindPolicy, "" // the log spells the kind out; it keeps no range
	if !reflect.DeepEqual(logged.Refusal, want) {
		t.Errorf("logged refusal differs from the guard's:\n got %+v\nwant %+v", logged.Refusal, want)
	}

	ada := h.signedIn("ada", models.RoleAdmin)
	p := ada.get("/refusals/" + strconv.FormatInt(rows[0].ID, 10))
	var addrs, chain []string
	p.doc.Find(`[data-testid="detail-addresses"] code`).Each(func(_ int, s *goquery.Selection) { addrs = append(addrs, s.Text()) })
	p.doc.Find(`[data-testid="detail-redirects"] li`).Each(func(_ int, s *goquery.Selection) { chain = append(chain, s.Text()) })
	if !slices.Equal(addrs, []string{"10.1.2.3", "fd00::7"}) || !slices.Equal(chain, []string{first}) {
		t.Errorf("page shows addresses %q and chain %q", addrs, chain)
	}
	if text(p, "detail-kind") != "policy" || text(p, "detail-remedy") != "add the allowlist entry wiki.intranet.corp" {
		t.Errorf("page shows kind %q, remedy %q", text(p, "detail-kind"), text(p, "detail-remedy"))
	}
	// The admin's page keeps the exact fix the agent was not shown.
	if got := text(p, "detail-fix"); got != refused.Fix || !strings.Contains(got, "wiki.intranet.corp") {
		t.Errorf("page shows the fix %q, want the guard's %q", got, refused.Fix)
	}
	if p.doc.Find(`[data-testid="allow-host"]`).Length() != 1 {
		t.Error("no Allow this host button for a refusal whose remedy is an entry")
	}

	csvPage := ada.get("/refusals.csv")
	recs, err := csv.NewReader(strings.NewReader(csvPage.body)).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("CSV: %d records, %v", len(recs), err)
	}
	col := func(name string) string { return recs[1][slices.Index(refusalCSVHeader, name)] }
	for name, want := range map[string]string{
		"addresses": "10.1.2.3,fd00::7", "redirects": first, "kind": "policy", "remedy": "add_entry",
		"remedy_value": "wiki.intranet.corp", "port": "80", "entry": "*.intranet.corp", "reason": "internal_address",
	} {
		if got := col(name); got != want {
			t.Errorf("CSV %s = %q, want %q", name, got, want)
		}
	}
}

func TestRefusalLogKindFilter(t *testing.T) {
	h := newHarness(t)
	f := seedLog(t, h, []string{"policy", "dns", "browser"}, []models.Refusal{
		{Tool: "fetch_url", Host: "intranet.corp", Code: "forbidden", Reason: "not_allowlisted", Kind: "policy"},
		{Tool: "fetch_url", Host: "nowhere.example", Code: "unreachable", Reason: "dns", Kind: "network"},
		{Tool: "take_screenshot", Host: "status.example.com", Code: "unreachable", Reason: "browser", Kind: "network"},
	})
	b := h.signedIn("sam", models.RoleSupport)
	p := b.get("/refusals?kind=network")
	if got, want := rowIDs(t, p), []int64{f.ids["browser"], f.ids["dns"]}; !slices.Equal(got, want) {
		t.Errorf("kind=network shows %v, want %v", got, want)
	}
	if n := p.doc.Find(`[data-testid="refusal-kind"]`).Length(); n != 2 {
		t.Errorf("%d rows marked as network failures, want 2", n)
	}
	if got := p.doc.Find(`select[name="kind"] option[selected]`).AttrOr("value", ""); got != "network" {
		t.Errorf("the kind menu shows %q, want network", got)
	}
	if href := p.doc.Find(`[data-testid="refusals-csv"]`).AttrOr("href", ""); href != "/refusals.csv?kind=network" {
		t.Errorf("CSV link %q keeps not the kind filter", href)
	}
	if got := rowIDs(t, b.get("/refusals?kind=policy")); !slices.Equal(got, []int64{f.ids["policy"]}) {
		t.Errorf("kind=policy shows %v", got)
	}
	recs, err := csv.NewReader(strings.NewReader(b.get("/refusals.csv?kind=network").body)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("CSV of network failures: %d records, %v", len(recs), err)
	}
	bad := b.get("/refusals?kind=outage")
	if bad.status != http.StatusBadRequest || !strings.Contains(text(bad, "filter-error-kind"), `"outage" is not a kind`) || len(rowIDs(t, bad)) != 0 {
		t.Errorf("a bad kind: status %d, error %q, %d rows", bad.status, text(bad, "filter-error-kind"), len(rowIDs(t, bad)))
	}
	if res := b.get("/refusals.csv?kind=outage"); res.status != http.StatusBadRequest {
		t.Errorf("CSV with a bad kind: status %d, want 400", res.status)
	}
}
