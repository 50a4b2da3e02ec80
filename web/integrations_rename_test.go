package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// A rename breaks every agent that calls the old name, so it needs its own
// tick, and the audit row names both.
func TestIntegrationRenameNeedsConfirmation(t *testing.T) {
	const warning = "Agents calling lookup_order will get an unknown-integration error until they use the new name."
	h := newHarness(t)
	withIntegrations(t, h)
	ada := h.signedIn("ada", models.RoleAdmin)
	ctx := context.Background()
	if _, err := h.store.CreateIntegration(ctx, models.AnyRevision, models.Integration{
		Name: "lookup_order", Description: "Look up an order.", Method: "GET", URLTemplate: "https://shop.example.com/orders/{id}",
		Params: []models.IntegrationParam{{Name: "id", Type: "string", Required: true}},
	}); err != nil {
		t.Fatal(err)
	}

	edit := ada.get("/integrations/http/lookup_order")
	box := edit.doc.Find(`[data-testid="rename-warning"]`)
	if _, hidden := box.Attr("hidden"); !hidden || box.AttrOr("data-rename-from", "") != "lookup_order" || !strings.Contains(box.Text(), warning) {
		t.Fatalf("edit form: the rename warning should be there, hidden until the name changes: %q", box.Text())
	}

	form := formValues(t, edit, `[data-testid="integration-form"]`)
	form.Set("name", "order_lookup")
	form.Del("confirm_rename")
	reloads := h.reloads.Load()
	p := ada.post("/integrations/http/lookup_order", form)
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("unconfirmed rename: status %d, want 422", p.status)
	}
	if got := p.doc.Find(`[data-testid="integration-form"] input[name="name"]`).AttrOr("value", ""); got != "order_lookup" {
		t.Errorf("the typed name was not kept: %q", got)
	}
	box = p.doc.Find(`[data-testid="rename-warning"]`)
	if _, hidden := box.Attr("hidden"); hidden || box.Find(`input[name="confirm_rename"][value="yes"]`).Length() != 1 {
		t.Error("after an unconfirmed rename the warning and its tick box must show")
	}
	if errText := p.doc.Find(`.field-error`).Text(); !strings.Contains(errText, warning) {
		t.Errorf("name error = %q, want %q", errText, warning)
	}
	if _, err := h.store.IntegrationByName(ctx, "lookup_order"); err != nil || h.reloads.Load() != reloads {
		t.Fatalf("the unconfirmed rename changed something: %v, reloads %d → %d", err, reloads, h.reloads.Load())
	}

	form = formValues(t, p, `[data-testid="integration-form"]`)
	form.Set("confirm_rename", "yes")
	res := ada.postForm("/integrations/http/lookup_order", form)
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/integrations/http/order_lookup" {
		t.Fatalf("confirmed rename: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	if _, err := h.store.IntegrationByName(ctx, "lookup_order"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("the old name is still stored: %v", err)
	}
	if _, err := h.store.IntegrationByName(ctx, "order_lookup"); err != nil {
		t.Errorf("the new name is not stored: %v", err)
	}
	recs, _, err := h.store.ListAudit(ctx, 0, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("audit: %v %v", recs, err)
	}
	if recs[0].Action != "integration.update" || !strings.HasPrefix(recs[0].Before, "name lookup_order\n") || !strings.HasPrefix(recs[0].After, "name order_lookup\n") {
		t.Errorf("audit row = %q → %q, want the old and the new name", recs[0].Before, recs[0].After)
	}

	// Saving without a rename needs no tick.
	form = formValues(t, ada.get("/integrations/http/order_lookup"), `[data-testid="integration-form"]`)
	form.Set("description", "Look up an order by number.")
	res = ada.postForm("/integrations/http/order_lookup", form)
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("a save without a rename: status %d, want 303", res.StatusCode)
	}
}
