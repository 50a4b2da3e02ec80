package web

import (
	"context"
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
