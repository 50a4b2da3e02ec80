package web

import (
	"context"
	"fmt"
	"testing"

	"github.com/outboundhq/outbound/models"
)

func TestAllowThisHostOnlyWhereAnEntryCanHelp(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	if err := h.store.InsertRefusals(context.Background(), []models.Refusal{
		{Tool: "fetch_url", URL: "http://169.254.169.254/latest/meta-data/", Host: "169.254.169.254", Port: 80, Code: "forbidden", Reason: "metadata"},
		{Tool: "fetch_url", URL: "http://10.0.0.5:8080/", Host: "10.0.0.5", Port: 8080, Code: "forbidden", Reason: "internal_address",
			RemedyKind: "add_entry", RemedyValue: "10.0.0.5:8080"},
		// Forbidden, with a host, but no entry is its remedy: no button.
		{Tool: "fetch_url", URL: "http://192.0.2.7/", Host: "192.0.2.7", Port: 80, Code: "forbidden", Reason: "internal_address"},
		// A change of setting is not an entry either.
		{Tool: "fetch_url", URL: "http://big.example/", Host: "big.example", Port: 80, Code: "too_large", Reason: "declared_size",
			RemedyKind: "change_setting", RemedyValue: "max_bytes"},
	}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]int{1: 0, 2: 1, 3: 0, 4: 0} {
		p := b.get(fmt.Sprintf("/refusals/%d", id))
		if n := p.doc.Find(`a[href^="/integrations/allow?refusal="]`).Length(); p.status != 200 || n != want {
			t.Errorf("refusal %d: %d Allow this host buttons, want %d", id, n, want)
		}
	}
	bad := b.get("/refusals?from=yesterday")
	if bad.doc.Find(`[data-testid="refusals-csv"]`).Length() != 0 {
		t.Fatal("Export CSV is offered for a filter that does not parse")
	}
	if good := b.get("/refusals?code=forbidden"); good.doc.Find(`[data-testid="refusals-csv"]`).Length() != 1 {
		t.Fatal("Export CSV is missing for a valid filter")
	}
}
