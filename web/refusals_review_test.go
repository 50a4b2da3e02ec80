package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// oneRefusal stores r and returns its ID.
func oneRefusal(t *testing.T, h *harness, r models.Refusal) int64 {
	t.Helper()
	return seedLog(t, h, []string{"only"}, []models.Refusal{r}).ids["only"]
}

var fullRefusal = models.Refusal{
	Time: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC), Tool: "fetch_url",
	URL: "https://short.example/t/42?utm=1", Host: "intranet.corp", Port: 443,
	Addresses: models.StringList{"10.1.2.3", "fd00::7"}, Code: "forbidden", Reason: "internal_address",
	Message: "intranet.corp resolves to 10.1.2.3, a private address.",
	Fix:     "Allow intranet.corp on the Outbound web access card if agents should read it.",
	Kind:    "policy", RemedyKind: "add_entry", RemedyValue: "intranet.corp",
	Entry: "", Agent: "helpdesk", Thread: "T-1001", Trigger: "email from bob@example.com",
	Redirects: models.StringList{"https://short.example/t/42?utm=1", "https://hop.example/next", "https://intranet.corp/hr"},
}

func text(p page, testid string) string {
	return strings.Join(strings.Fields(p.doc.Find(`[data-testid="`+testid+`"]`).Text()), " ")
}

func TestRefusalDetailShowsEverything(t *testing.T) {
	h := newHarness(t)
	id := oneRefusal(t, h, fullRefusal)
	p := h.signedIn("sam", models.RoleSupport).get("/refusals/" + strconv.FormatInt(id, 10) + "?host=intranet&code=forbidden")
	if p.status != http.StatusOK {
		t.Fatalf("detail: %d", p.status)
	}
	want := map[string]string{
		"detail-url":     fullRefusal.URL,
		"detail-host":    "intranet.corp",
		"detail-port":    "443",
		"detail-time":    "2025-03-04 05:06:07 UTC",
		"detail-code":    "forbidden",
		"detail-reason":  "internal_address",
		"detail-message": fullRefusal.Message,
		"detail-fix":     fullRefusal.Fix,
		"detail-entry":   "none",
		"detail-tool":    "fetch_url",
		"detail-agent":   "helpdesk",
		"detail-thread":  "T-1001",
		"detail-trigger": "email from bob@example.com",
		"detail-via":     "the tool call",
		"detail-status":  "Unreviewed",
	}
	for testid, w := range want {
		if got := text(p, testid); got != w {
			t.Errorf("%s = %q, want %q", testid, got, w)
		}
	}
	addrs := p.doc.Find(`[data-testid="detail-addresses"] code`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	if !slices.Equal(addrs, []string{"10.1.2.3", "fd00::7"}) {
		t.Errorf("addresses %q", addrs)
	}
	var chain []string
	p.doc.Find(`[data-testid="detail-redirects"] li`).Each(func(_ int, s *goquery.Selection) { chain = append(chain, s.Text()) })
	if want := []string(fullRefusal.Redirects); !slices.Equal(chain, want) {
		t.Errorf("redirect chain %q, want in order %q", chain, want)
	}
	if back := p.doc.Find(`[data-testid="back-to-log"]`).AttrOr("href", ""); back != "/refusals?code=forbidden&host=intranet" {
		t.Errorf("back link %q does not return to the filtered log", back)
	}
	if p.doc.Find(`[data-testid="allow-host"]`).Length() != 0 {
		t.Error("support sees Allow this host")
	}
}

func TestRefusalDetailNotFound(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("sam", models.RoleSupport)
	for _, path := range []string{"/refusals/999", "/refusals/0", "/refusals/abc"} {
		t.Run(path, func(t *testing.T) {
			if p := b.get(path); p.status != http.StatusNotFound {
				t.Errorf("status %d, want 404", p.status)
			}
		})
	}
}

func TestAllowThisHostButton(t *testing.T) {
	h := newHarness(t)
	forbidden := oneRefusal(t, h, fullRefusal)
	timeout := fullRefusal
	timeout.Code, timeout.Reason, timeout.Kind = "timeout", "timeout", "network"
	timeout.RemedyKind, timeout.RemedyValue = "change_setting", "timeout"
	if err := h.store.InsertRefusals(t.Context(), []models.Refusal{timeout}); err != nil {
		t.Fatal(err)
	}
	admin := h.signedIn("ada", models.RoleAdmin)
	support := h.signedIn("sam", models.RoleSupport)
	tests := []struct {
		name string
		b    *browser
		id   int64
		want string
	}{
		{"admin, forbidden", admin, forbidden, "/integrations/allow?refusal=" + strconv.FormatInt(forbidden, 10)},
		{"admin, timeout", admin, forbidden + 1, ""},
		{"support, forbidden", support, forbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.b.get("/refusals/" + strconv.FormatInt(tt.id, 10))
			if got := p.doc.Find(`[data-testid="allow-host"]`).AttrOr("href", ""); got != tt.want {
				t.Errorf("Allow this host links to %q, want %q", got, tt.want)
			}
		})
	}
}

// newReviewHarness is a harness whose reviews go through the application
// layer, wired as `console serve` wires it (every harness is).
func newReviewHarness(t *testing.T) *harness {
	t.Helper()
	return newHarness(t)
}

// reviewAudits is the audit trail's refusal reviews, newest first.
func reviewAudits(t *testing.T, h *harness) []models.Audit {
	t.Helper()
	all, _, err := h.store.ListAudit(t.Context(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []models.Audit
	for _, a := range all {
		if a.Action == app.ActionRefusalReview {
			out = append(out, a)
		}
	}
	return out
}

func TestReviewBySupportThenFilter(t *testing.T) {
	h := newReviewHarness(t)
	f := standardLog(t, h)
	id := f.ids["intranet-exact"]
	path := "/refusals/" + strconv.FormatInt(id, 10)
	b := h.signedIn("sam", models.RoleSupport)
	before := time.Now().UTC().Add(-time.Second)
	resp := b.postForm(path+"/review", url.Values{"_csrf": {b.csrf(path)}, "status": {"needs_access"}, "comment": {"HR wiki is needed for onboarding tickets."}, "back": {"host=intranet&evil=1"}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != path+"?host=intranet" {
		t.Fatalf("review: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	r, err := h.store.RefusalByID(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != models.StatusNeedsAccess || r.Comment != "HR wiki is needed for onboarding tickets." || r.ReviewedBy != "sam" || r.ReviewedAt == nil || r.ReviewedAt.Before(before) {
		t.Fatalf("stored review: %+v", r)
	}
	audits := reviewAudits(t, h)
	if len(audits) != 1 || audits[0].Actor != "sam" || audits[0].Target != "refusal "+strconv.FormatInt(id, 10) ||
		audits[0].Before != "unreviewed" || audits[0].After != "needs_access: HR wiki is needed for onboarding tickets." {
		t.Fatalf("audit of the review: %+v, want one record by sam", audits)
	}
	p := b.get(path)
	if got := text(p, "flash"); got != "Refusal "+strconv.FormatInt(id, 10)+" marked Needs access." {
		t.Errorf("flash %q", got)
	}
	if got := text(p, "reviewed-by"); !strings.HasPrefix(got, "Needs access · by sam on "+r.ReviewedAt.UTC().Format("2006-01-02")) {
		t.Errorf("reviewed-by %q", got)
	}
	if got := p.doc.Find(`[data-testid="review-form"] input[name="status"][checked]`).AttrOr("value", ""); got != "needs_access" {
		t.Errorf("the form does not start from the saved status: %q", got)
	}
	list := b.get("/refusals?status=needs_access")
	if got := rowIDs(t, list); !slices.Equal(got, []int64{id}) {
		t.Errorf("status filter shows %v, want [%d]", got, id)
	}
	if got := text(list, "refusal-status"); got != "Needs access" {
		t.Errorf("row status pill %q", got)
	}
	if got := len(rowIDs(t, b.get("/refusals?status=unreviewed"))); got != len(f.ids)-1 {
		t.Errorf("unreviewed shows %d rows, want %d", got, len(f.ids)-1)
	}
}

func TestReviewRejectsBadInput(t *testing.T) {
	h := newReviewHarness(t)
	id := oneRefusal(t, h, fullRefusal)
	path := "/refusals/" + strconv.FormatInt(id, 10)
	b := h.signedIn("sam", models.RoleSupport)
	tests := []struct {
		name    string
		form    url.Values
		field   string
		message string
	}{
		{"unknown status", url.Values{"status": {"approved"}, "comment": {"keep me"}}, "status", `"approved" is not a review status`},
		{"no status", url.Values{"comment": {"keep me"}}, "status", "Choose what this refusal was"},
		{"unreviewed is not a verdict", url.Values{"status": {"unreviewed"}}, "status", `"unreviewed" is not a review status`},
		{"comment too long", url.Values{"status": {"reviewed"}, "comment": {strings.Repeat("é", app.MaxReviewComment+1)}}, "comment", "The comment is 1001 characters; shorten it to at most 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.form.Set("_csrf", b.csrf(path))
			p := b.post(path+"/review", tt.form)
			if p.status != http.StatusUnprocessableEntity {
				t.Errorf("status %d, want 422", p.status)
			}
			if got := text(p, "review-error-"+tt.field); !strings.Contains(got, tt.message) {
				t.Errorf("message %q, want it to contain %q", got, tt.message)
			}
			if got := p.doc.Find(`textarea[name="comment"]`).Text(); got != tt.form.Get("comment") {
				t.Errorf("the typed comment was lost: %q", got)
			}
			r, _ := h.store.RefusalByID(t.Context(), id)
			if r.Status != models.StatusUnreviewed || r.Comment != "" || r.ReviewedBy != "" || r.ReviewedAt != nil {
				t.Errorf("a rejected review changed the refusal: %+v", r)
			}
			if a := reviewAudits(t, h); len(a) != 0 {
				t.Errorf("a rejected review was audited: %+v", a)
			}
		})
	}
}

func TestForgedReviewWithoutCSRF(t *testing.T) {
	h := newReviewHarness(t)
	id := oneRefusal(t, h, fullRefusal)
	b := h.signedIn("sam", models.RoleSupport)
	for _, form := range []url.Values{
		{"status": {"reviewed"}},
		{"status": {"reviewed"}, "_csrf": {"forged-token"}},
	} {
		resp := b.postRaw("/refusals/"+strconv.FormatInt(id, 10)+"/review", form)
		p := readPage(t, resp)
		if p.status != http.StatusForbidden || !strings.Contains(p.body, "security token") {
			t.Errorf("forged review (%v): %d", form, p.status)
		}
	}
	r, _ := h.store.RefusalByID(t.Context(), id)
	if r.Status != models.StatusUnreviewed || r.ReviewedBy != "" {
		t.Errorf("a forged review changed the refusal: %+v", r)
	}
}

// TestRefusalDetailSaysAProxiedRowIsThePagesRequest: a screenshot's own
// call and a refused load of its page are two rows; the detail page says
// which one this is.
func TestRefusalDetailSaysAProxiedRowIsThePagesRequest(t *testing.T) {
	h := newHarness(t)
	proxied := fullRefusal
	proxied.Tool, proxied.Proxied = "take_screenshot", true
	id := oneRefusal(t, h, proxied)
	p := h.signedIn("sam", models.RoleSupport).get("/refusals/" + strconv.FormatInt(id, 10))
	if got := text(p, "detail-via"); got != "a request of the page, through the screenshot's proxy" {
		t.Errorf("detail-via = %q", got)
	}
}
