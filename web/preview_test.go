package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// previewHarness is a console whose safe preview reads through a real
// registry over the harness's app and guard (fetch_url only: no browser).
func previewHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, func(d *Deps) {
		a := d.Config.(*app.App)
		reg := tools.Builtin(tools.Deps{Guard: a.Guard(), Settings: a.Settings})
		d.Preview = a.Previews(reg)
	})
}

// canarySite serves a page full of things a browser would load or follow
// (an image, a script, a stylesheet, a link) and counts every request.
func canarySite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io := `<!doctype html><html><head><title>Status of the shop</title><link rel="stylesheet" href="/style.css"><script src="/app.js"></script></head>
<body><main><h1>All systems operational</h1><p>The shop has been running smoothly since Monday morning, and every service answers.</p>
<p><img src="/tracker.png" alt="pixel"> Read the <a href="/incidents">incident history</a> for details.</p>
<p>Marker: <b>&lt;script&gt;alert(1)&lt;/script&gt;</b></p></main></body></html>`
		w.Write([]byte(io))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestPreviewShowsTextUnderAStrictPolicyAndIsAudited(t *testing.T) {
	h := previewHarness(t)
	site, hits := canarySite(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, strings.TrimPrefix(site.URL, "http://"), "")
	sam := h.signedIn("sam", models.RoleSupport)

	form := sam.get("/preview?url=" + url.QueryEscape(site.URL+"/status") + "&ticket=HD-4711")
	if form.status != http.StatusOK || form.header.Get("Content-Security-Policy") != previewCSP {
		t.Fatalf("form: %d, CSP %q", form.status, form.header.Get("Content-Security-Policy"))
	}
	if v, _ := form.doc.Find("#preview-url").Attr("value"); v != site.URL+"/status" {
		t.Errorf("the form is not prefilled from the link: %q", v)
	}
	if hits.Load() != 0 {
		t.Fatalf("opening the form read the site %d times; only the Preview button may", hits.Load())
	}

	p := sam.post("/preview", url.Values{"url": {site.URL + "/status"}, "ticket": {"HD-4711"}, "_csrf": {sam.csrf("/preview")}})
	if p.status != http.StatusOK {
		t.Fatalf("preview: %d\n%s", p.status, p.body)
	}
	if got := p.header.Get("Content-Security-Policy"); got != previewCSP {
		t.Fatalf("CSP = %q, want %q", got, previewCSP)
	}
	for _, want := range []string{"default-src 'none'", "img-src data:", "style-src 'self'"} {
		if !strings.Contains(previewCSP, want) {
			t.Errorf("the policy lacks %s", want)
		}
	}
	for _, banned := range []string{"connect-src", "frame-src", "script-src"} {
		if strings.Contains(previewCSP, banned) {
			t.Errorf("the policy opens %s; default-src 'none' must govern it", banned)
		}
	}
	text := p.doc.Find(`[data-testid="preview-text"]`).Text()
	if !strings.Contains(text, "All systems operational") || !strings.Contains(text, "<script>alert(1)</script>") {
		t.Fatalf("preview text = %q", text)
	}
	// The site's address may be shown, but nothing on the page may make a
	// browser request it: no link to it, no image, script or frame.
	p.doc.Find("a[href], img[src], script[src], link[href], iframe, form[action]").Each(func(_ int, s *goquery.Selection) {
		for _, attr := range []string{"href", "src", "action"} {
			if v, ok := s.Attr(attr); ok && strings.Contains(v, strings.TrimPrefix(site.URL, "http://")) {
				t.Errorf("%s %s=%q points at the previewed site", goquery.NodeName(s), attr, v)
			}
		}
	})
	if n := p.doc.Find(`[data-testid="preview-no-shot"]`).Length(); n != 1 {
		t.Errorf("without a browser the page must say there is no screenshot")
	}
	if got := p.doc.Find(`[data-testid="preview-ticket"]`).Text(); got != "HD-4711" {
		t.Errorf("ticket shown = %q", got)
	}
	if hits.Load() != 1 {
		t.Errorf("the site was read %d times, want once (fetch_url)", hits.Load())
	}
	audits := auditOf(t, h, app.ActionPreview)
	if len(audits) != 1 || audits[0].Actor != "sam" || audits[0].Target != site.URL+"/status" || audits[0].After != "ticket HD-4711; read" {
		t.Fatalf("audit = %+v", audits)
	}
}

func TestPreviewOfARefusedURLShowsTheRefusalAndReadsNothing(t *testing.T) {
	h := previewHarness(t)
	site, hits := canarySite(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "docs.example", "")

	// A loopback site, refused as internal; the metadata address.
	for _, c := range []struct{ url, reason string }{
		{"http://169.254.169.254/latest/meta-data/", "metadata"},
		{site.URL + "/", "internal_address"},
	} {
		p := ada.post("/preview", url.Values{"url": {c.url}, "_csrf": {ada.csrf("/preview")}})
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d", c.url, p.status)
		}
		if got := p.doc.Find(`[data-testid="preview-reason"]`).Text(); got != c.reason {
			t.Errorf("%s: reason %q, want %q", c.url, got, c.reason)
		}
		if p.doc.Find(`[data-testid="preview-text"]`).Length() != 0 {
			t.Errorf("%s: a refused preview shows text", c.url)
		}
		if got := p.header.Get("Content-Security-Policy"); got != previewCSP {
			t.Errorf("%s: CSP = %q", c.url, got)
		}
	}
	if hits.Load() != 0 || len(h.dialer.Dials()) != 0 {
		t.Fatalf("a refused preview reached the site %d times, dialled %v", hits.Load(), h.dialer.Dials())
	}
	audits := auditOf(t, h, app.ActionPreview)
	if len(audits) != 2 || audits[1].After != "refused: forbidden (metadata)" || audits[0].After != "refused: forbidden (internal_address)" {
		t.Fatalf("audit = %+v", audits)
	}
	// Like any call, a refused preview is one refusal row, under the
	// console user's agent name in the preview thread.
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows, _, err := h.store.ListRefusals(t.Context(), models.RefusalQuery{Agent: "console:ada"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 2 {
			if rows[0].Thread != app.PreviewThread || rows[0].Tool != tools.FetchURLName {
				t.Fatalf("row = %+v", rows[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d refusal rows for the previews, want 2", len(rows))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Preview safely is offered for a public host refused only by the
// allowlist, so it must read that host: the allowlist narrows agents,
// not a person's preview. Agents stay refused.
func TestPreviewReadsAPublicHostTheAllowlistRefusesAgents(t *testing.T) {
	h := previewHarness(t)
	site, hits := canarySite(t)
	h.resolver.Answer("status.vendor.example", "93.184.216.34")
	h.dialer.Route("93.184.216.34:80", strings.TrimPrefix(site.URL, "http://"))
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "docs.example", "")
	if d := h.guard.Precheck("http://status.vendor.example/"); d.Allowed || d.Reason != guard.ReasonNotAllowlisted {
		t.Fatalf("agents' decision = %+v, want not_allowlisted", d)
	}

	p := ada.post("/preview", url.Values{"url": {"http://status.vendor.example/"}, "_csrf": {ada.csrf("/preview")}})
	if p.status != http.StatusOK || p.doc.Find(`[data-testid="preview-refusal"]`).Length() != 0 ||
		!strings.Contains(p.doc.Find(`[data-testid="preview-text"]`).Text(), "All systems operational") {
		t.Fatalf("preview of a host only the allowlist refuses: %d %s", p.status, p.doc.Find("main").Text())
	}
	if hits.Load() != 1 {
		t.Fatalf("the site was read %d times, want once", hits.Load())
	}
	if audits := auditOf(t, h, app.ActionPreview); len(audits) != 1 || audits[0].After != "read" {
		t.Fatalf("audit = %+v", audits)
	}
}

func TestPreviewFormKeepsInputAndNamesTheFix(t *testing.T) {
	h := previewHarness(t)
	sam := h.signedIn("sam", models.RoleSupport)
	p := sam.post("/preview", url.Values{"url": {"status.example.com"}, "ticket": {"HD-1"}, "_csrf": {sam.csrf("/preview")}})
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", p.status)
	}
	if got := p.doc.Find(`[data-testid="preview-url-error"]`).Text(); !strings.Contains(got, "https://status.example.com") {
		t.Errorf("error = %q, want the https:// form suggested", got)
	}
	if v, _ := p.doc.Find("#preview-ticket").Attr("value"); v != "HD-1" {
		t.Errorf("the ticket typed was lost: %q", v)
	}
	if len(auditOf(t, h, app.ActionPreview)) != 0 {
		t.Error("a preview that read nothing was audited")
	}
}

func TestPreviewNeedsASignedInUser(t *testing.T) {
	h := previewHarness(t)
	resp, err := h.browser().client.Get(h.srv.URL + "/preview")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Fatalf("anonymous /preview: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// Preview safely is offered where it can show more (a public host refused
// only by the allowlist), never for an internal address or a metadata
// endpoint, nor for a network failure.
func TestRefusalDetailOffersPreviewOnlyWhereItHelps(t *testing.T) {
	h := previewHarness(t)
	sam := h.signedIn("sam", models.RoleSupport)
	cases := []struct {
		row  models.Refusal
		want bool
	}{
		{models.Refusal{URL: "https://shop.example/a", Host: "shop.example", Port: 443, Code: "forbidden", Reason: "not_allowlisted", Kind: "policy",
			RemedyKind: "add_entry", RemedyValue: "shop.example", Addresses: models.StringList{"93.184.216.34"}}, true},
		{models.Refusal{URL: "http://10.0.0.5/", Host: "10.0.0.5", Port: 80, Code: "forbidden", Reason: "internal_address", Kind: "policy",
			RemedyKind: "add_entry", RemedyValue: "10.0.0.5"}, false},
		{models.Refusal{URL: "http://intranet.corp/", Host: "intranet.corp", Port: 80, Code: "forbidden", Reason: "not_allowlisted", Kind: "policy",
			RemedyKind: "add_entry", RemedyValue: "intranet.corp", Addresses: models.StringList{"10.1.2.3"}}, false},
		{models.Refusal{URL: "http://169.254.169.254/", Host: "169.254.169.254", Port: 80, Code: "forbidden", Reason: "metadata", Kind: "policy"}, false},
		{models.Refusal{URL: "https://gone.example/", Host: "gone.example", Port: 443, Code: "unreachable", Reason: "dns", Kind: "network"}, false},
	}
	for _, c := range cases {
		id := refusal(t, h, c.row)
		p := sam.get("/refusals/" + strconv.FormatInt(id, 10))
		link := p.doc.Find(`[data-testid="preview-safely"]`)
		if got := link.Length() == 1; got != c.want {
			t.Errorf("%s (%s): Preview safely offered = %v, want %v", c.row.URL, c.row.Reason, got, c.want)
		}
		if href, _ := link.Attr("href"); c.want && href != "/preview?url="+url.QueryEscape(c.row.URL) {
			t.Errorf("link = %q", href)
		}
	}
}
