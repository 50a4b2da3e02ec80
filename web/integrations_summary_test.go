package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

func TestIntegrationsPageSummarisesHTTPIntegrations(t *testing.T) {
	h := newHarness(t)
	admin := h.signedIn("ada", models.RoleAdmin)
	card := admin.get("/integrations").doc.Find(`[data-testid="http-integrations"]`)
	if !strings.Contains(card.Text(), "0 defined") || card.Find(`a[href="/integrations/http/new"]`).Length() != 1 {
		t.Fatalf("empty summary for an admin: %q", card.Text())
	}
	if _, err := h.store.CreateIntegration(context.Background(), models.AnyRevision, models.Integration{
		Name: "order_status", Method: "GET", URLTemplate: "https://shop.example.com/orders/{id}",
		Params: []models.IntegrationParam{{Name: "id", Type: "string", Required: true}},
	}); err != nil {
		t.Fatal(err)
	}
	card = admin.get("/integrations").doc.Find(`[data-testid="http-integrations"]`)
	if !strings.Contains(card.Text(), "1 defined") || !strings.Contains(card.Text(), "order_status") || card.Find(`a[href="/integrations/http"]`).Length() != 1 {
		t.Fatalf("summary: %q", card.Text())
	}
	support := h.signedIn("sam", models.RoleSupport).get("/integrations").doc.Find(`[data-testid="http-integrations"]`)
	if support.Find(`a[href="/integrations/http/new"]`).Length() != 0 || !strings.Contains(support.Text(), "order_status") {
		t.Fatalf("support sees the names but no create link: %q", support.Text())
	}
}

// Every state of the Integrations page carries the HTTP integrations
// summary, not only the plain GET: a page that says "0 defined" beside a
// test result would tell an admin their integrations are gone.
func TestIntegrationsSummaryOnEveryPageState(t *testing.T) {
	h := newHarness(t)
	h.resolver.Answer("intranet.corp", "10.1.2.3")
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "status.example.com", "")
	if _, err := h.store.CreateIntegration(context.Background(), models.AnyRevision, models.Integration{
		Name: "order_status", Method: "GET", URLTemplate: "https://shop.example.com/orders/{id}",
		Params: []models.IntegrationParam{{Name: "id", Type: "string", Required: true}},
	}); err != nil {
		t.Fatal(err)
	}
	id := refusal(t, h, models.Refusal{Tool: "fetch_url", URL: "http://intranet.corp:8080/x", Host: "intranet.corp", Port: 8080,
		Code: "forbidden", Reason: "not_allowlisted", Message: "intranet.corp is not on the outbound allowlist."})
	stale := url.Values{"revision": {"0"}}

	tests := []struct {
		name   string
		status int
		load   func() page
	}{
		{"test a URL", http.StatusOK, func() page {
			return ada.get("/integrations/test?url=" + url.QueryEscape("https://status.example.com/"))
		}},
		{"test an empty URL", http.StatusUnprocessableEntity, func() page { return ada.get("/integrations/test?url=") }},
		{"rejected add", http.StatusUnprocessableEntity, func() page {
			v := formValues(t, ada.get("/integrations"), `form[data-testid="allow-form"]`)
			v.Set("entries", "http://")
			return ada.post("/integrations/allowlist", v)
		}},
		{"add from a stale page", http.StatusConflict, func() page {
			return ada.post("/integrations/allowlist", url.Values{"revision": stale["revision"], "entries": {"wiki.example.com"}})
		}},
		{"remove from a stale page", http.StatusConflict, func() page {
			return ada.post("/integrations/allowlist/remove", url.Values{"revision": stale["revision"], "entry": {"status.example.com"}})
		}},
		{"allow this host", http.StatusOK, func() page { return ada.get("/integrations/allow?refusal=" + strconv.FormatInt(id, 10)) }},
		{"allow this host for a purged refusal", http.StatusNotFound, func() page { return ada.get("/integrations/allow?refusal=999") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.load()
			if p.status != tt.status {
				t.Fatalf("status %d, want %d", p.status, tt.status)
			}
			card := p.doc.Find(`[data-testid="http-integrations"]`)
			if !strings.Contains(card.Text(), "1 defined") || !strings.Contains(card.Text(), "order_status") {
				t.Errorf("summary = %q, want 1 defined naming order_status", strings.Join(strings.Fields(card.Text()), " "))
			}
			if card.Find(`a[href="/integrations/http/new"]`).Length() != 1 {
				t.Error("the summary lost its New integration link")
			}
		})
	}
}
