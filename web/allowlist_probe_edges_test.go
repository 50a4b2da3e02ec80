package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// A host typed without its scheme gets the whole URL suggested, as a link
// that tests it, instead of "ask for an http:// link".
func TestTestURLSuggestsTheSchemeForABareHost(t *testing.T) {
	h := newHarness(t)
	h.resolver.Answer("status.example.com", "93.184.216.34")
	ada := h.signedIn("ada", models.RoleAdmin)
	p := ada.get("/integrations/test?url=status.example.com")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	sug := p.doc.Find(`[data-testid="test-suggest"]`)
	href, _ := sug.Find("a").Attr("href")
	if !strings.Contains(sug.Text(), "https://status.example.com/") || href != "/integrations/test?url="+url.QueryEscape("https://status.example.com/")+"#url-test" {
		t.Fatalf("suggestion %q → %q", sug.Text(), href)
	}
	if fix := p.doc.Find(`[data-testid="test-fix"]`).Text(); strings.Contains(fix, "Ask for") || !strings.Contains(fix, "https://status.example.com/") {
		t.Errorf("fix = %q", fix)
	}
	// The suggested link itself passes under PUBLIC WEB, with no suggestion.
	p = ada.get(href)
	if p.doc.Find(`[data-testid="test-suggest"]`).Length() != 0 || !strings.HasPrefix(strings.TrimSpace(p.doc.Find(`[data-testid="test-result"] h3`).Text()), "Allowed") {
		t.Errorf("the suggested URL: %q", p.doc.Find(`[data-testid="test-result"]`).Text())
	}
	// Something that is not a host gets no suggestion.
	for _, raw := range []string{"mailto:ops@example.com", "not a url", "ftp://files.example.com/"} {
		if got := bareHostURL(raw); got != "" {
			t.Errorf("bareHostURL(%q) = %q, want none", raw, got)
		}
	}
	if got := bareHostURL("intranet.corp:8080/status"); got != "https://intranet.corp:8080/status" {
		t.Errorf("bareHostURL with a port and path = %q", got)
	}
}

// A name that does not resolve is the network's failure: the entry that
// admits the host is not blamed for it.
func TestTestURLDoesNotBlameTheEntryForADNSFailure(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "status.example.com", "")
	p := ada.get("/integrations/test?url=" + url.QueryEscape("https://status.example.com/"))
	if got := p.doc.Find(`[data-testid="test-reason"]`).Text(); got != "dns" {
		t.Fatalf("reason %q, want dns", got)
	}
	entry := p.doc.Find(`[data-testid="test-entry"]`).Text()
	if strings.Contains(entry, "does not admit") || !strings.Contains(entry, "admits this host") {
		t.Errorf("entry line = %q", entry)
	}
}

// The result comes back where the form is: the form's action carries the
// box's anchor, so the browser scrolls to it past a long list.
func TestTestURLKeepsTheResultInView(t *testing.T) {
	h := newHarness(t)
	sam := h.signedIn("sam", models.RoleSupport)
	p := sam.get("/integrations")
	if action, _ := p.doc.Find(`[data-testid="test-form"]`).Attr("action"); action != "/integrations/test#url-test" {
		t.Errorf("form action = %q", action)
	}
	if p.doc.Find(`#url-test [data-testid="test-form"]`).Length() != 1 {
		t.Error("the anchor is not on the Test a URL box")
	}
}
