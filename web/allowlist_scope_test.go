package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// A support user files an access request from a refusal; an admin sees
// it on the card and approves it, which adds an internal host for the
// refused agent and tool only and keeps PUBLIC WEB.
func TestAccessRequestFromRefusalToApproval(t *testing.T) {
	h := newHarness(t)
	h.resolver.Answer("wiki.intranet.example.com", "10.4.0.2")
	ada := h.signedIn("ada", models.RoleAdmin)
	sam := h.signedIn("sam", models.RoleSupport)
	id := refusal(t, h, models.Refusal{URL: "https://wiki.intranet.example.com/", Host: "wiki.intranet.example.com", Port: 443, Code: "forbidden",
		Reason: "internal_address", RemedyKind: "add_entry", RemedyValue: "wiki.intranet.example.com", RemedyInternal: true, Agent: "helpdesk-bot", Tool: "fetch_url"})
	detail := "/refusals/" + strconv.FormatInt(id, 10)
	form := formValues(t, sam.get(detail), `[data-testid="request-access"] form`)
	if p := sam.post("/integrations/access/request", form); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.doc.Find(`[data-testid="request-access-error"]`).Text(), "Say why") {
		t.Fatalf("a request without a comment: %d", p.status)
	}
	form.Set("comment", "ticket 4711: the customer's order is on the wiki")
	if p := sam.post("/integrations/access/request", form); p.status != http.StatusSeeOther {
		t.Fatalf("request access: %d", p.status)
	}
	if got := sam.get(detail).doc.Find(`[data-testid="request-access"]`).Text(); !strings.Contains(got, "waiting for an admin") {
		t.Fatalf("the refusal page after the request: %q", got)
	}
	if n := sam.get("/integrations").doc.Find(`[data-testid="access-request"]`).Length(); n != 0 {
		t.Fatal("support sees the approve forms")
	}
	card := ada.get("/integrations")
	req := card.doc.Find(`[data-testid="access-request"]`)
	if req.Length() != 1 || !strings.Contains(req.Text(), "ticket 4711") {
		t.Fatalf("pending requests on the card: %q", req.Text())
	}
	approve := formValues(t, card, `[data-testid="access-request"] form[action$="/approve"]`)
	if approve.Get("entry") != "wiki.intranet.example.com" || approve.Get("agents") != "helpdesk-bot" || approve.Get("tools") != "fetch_url" || approve.Get("internal") != "yes" {
		t.Fatalf("the approval is not prefilled from the refusal: %v", approve)
	}
	action, _ := req.Find(`form[action$="/approve"]`).Attr("action")
	if p := ada.post(action, approve); p.status != http.StatusSeeOther {
		t.Fatalf("approve: %d", p.status)
	}
	if badge := ada.get("/integrations").doc.Find(`[data-testid="egress-badge"]`).Text(); badge != "PUBLIC WEB" {
		t.Fatalf("badge after a scoped internal host = %q, want PUBLIC WEB (the default scope is unchanged)", badge)
	}
	bot := guard.WithCaller(context.Background(), guard.Caller{Agent: "helpdesk-bot", Tool: "fetch_url"})
	if d := h.guard.Decide(bot, "https://wiki.intranet.example.com/"); !d.Allowed {
		t.Fatalf("the approved host is refused: %s", d.Message)
	}
	if d := h.guard.Decide(context.Background(), "https://wiki.intranet.example.com/"); d.Allowed {
		t.Fatal("every agent reaches the host approved for one")
	}
	r, _ := h.store.RefusalByID(context.Background(), id)
	if r.Status != models.StatusReviewed || !strings.Contains(r.Comment, "Access approved") {
		t.Fatalf("the refusal's review: %q %q", r.Status, r.Comment)
	}
}

func TestReportOnlyEntryOnTheCardIsEnforcedWithOneClick(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	v := formValues(t, ada.get("/integrations"), `form[data-testid="allow-form"]`)
	v.Set("entries", "status.example.com")
	v.Set("report_only", "yes")
	if p := ada.post("/integrations/allowlist", v); p.status != http.StatusSeeOther {
		t.Fatalf("add report-only: %d", p.status)
	}
	card := ada.get("/integrations")
	if badge := card.doc.Find(`[data-testid="egress-badge"]`).Text(); badge != "PUBLIC WEB · 1 REPORT-ONLY" {
		t.Fatalf("badge = %q", badge)
	}
	if got := card.doc.Find(`[data-testid="would-refuse-summary"]`).Text(); !strings.Contains(got, "0 requests from 0 agents in the last 7 days would have been refused") {
		t.Fatalf("would-refuse summary = %q", got)
	}
	if !h.guard.Policy().PublicWeb() {
		t.Fatal("a report-only entry narrowed the running guard")
	}
	enforce := formValues(t, card, `form[action="/integrations/allowlist/enforce"]`)
	if p := ada.post("/integrations/allowlist/enforce", enforce); p.status != http.StatusSeeOther {
		t.Fatalf("enforce: %d", p.status)
	}
	if badge := ada.get("/integrations").doc.Find(`[data-testid="egress-badge"]`).Text(); badge != "1 ALLOWED" {
		t.Fatalf("badge after enforce = %q", badge)
	}
	if h.guard.Policy().PublicWeb() {
		t.Fatal("the enforced entry does not narrow the running guard")
	}
	if got := auditOf(t, h, "allowlist.enforce"); len(got) != 1 {
		t.Fatalf("audit: %v", got)
	}
}

func TestTestAURLAsAnAgentAndTool(t *testing.T) {
	h := newHarness(t)
	h.resolver.Answer("crm.intranet.example.com", "10.9.0.4")
	ada := h.signedIn("ada", models.RoleAdmin)
	v := formValues(t, ada.get("/integrations"), `form[data-testid="allow-form"]`)
	v.Set("entries", "crm.intranet.example.com:8443")
	v.Set("tools", "call_integration")
	v.Set("internal", "yes")
	if p := ada.post("/integrations/allowlist", v); p.status != http.StatusSeeOther {
		t.Fatalf("add: %d %s", p.status, p.doc.Find(".field-error").Text())
	}
	q := url.Values{"url": {"https://crm.intranet.example.com:8443/"}, "agent": {"bot"}, "tool": {"fetch_url"}}
	p := ada.get("/integrations/test?" + q.Encode())
	if !p.doc.Find(`[data-testid="test-result"]`).HasClass("decision-refused") {
		t.Fatal("fetch_url reaches the integration's internal host")
	}
	q.Set("tool", "call_integration")
	p = ada.get("/integrations/test?" + q.Encode())
	if !p.doc.Find(`[data-testid="test-result"]`).HasClass("decision-allowed") || !strings.Contains(p.doc.Find(`[data-testid="test-reach"]`).Text(), "PUBLIC WEB · 1 INTERNAL") {
		t.Fatalf("call_integration: %q / %q", p.doc.Find(`[data-testid="test-result"]`).Text(), p.doc.Find(`[data-testid="test-reach"]`).Text())
	}
	// Without a URL: what the agent reaches with the tool.
	p = ada.get("/integrations/test?" + url.Values{"agent": {"bot"}, "tool": {"call_integration"}}.Encode())
	if p.status != http.StatusOK || !strings.Contains(p.doc.Find(`[data-testid="test-reach-entries"]`).Text(), "crm.intranet.example.com:8443 (internal host)") {
		t.Fatalf("reach without a URL: %d %q", p.status, p.doc.Find(`[data-testid="test-reach-entries"]`).Text())
	}
	p = ada.get("/integrations/test?" + url.Values{"agent": {"bot"}, "tool": {"fetch_url"}}.Encode())
	if strings.Contains(p.doc.Find(`.test-scope`).Text(), "crm.intranet") {
		t.Fatal("fetch_url is shown an entry scoped to call_integration")
	}
}
