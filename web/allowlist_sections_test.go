package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// TestOtherSectionsDoNotMakeTheAllowlistFormStale: a settings change made
// while an admin fills in the allowlist form is not a conflict; an
// allowlist change is.
func TestOtherSectionsDoNotMakeTheAllowlistFormStale(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	rev, ok := b.get("/integrations").doc.Find(`[data-testid="allow-form"] input[name="revision"]`).Attr("value")
	if !ok {
		t.Fatal("the add form carries no revision")
	}
	if _, err := h.store.SetSettings(context.Background(), models.AnyRevision, "bo", map[string]string{"timeout": "20s"}); err != nil {
		t.Fatal(err)
	}
	resp := b.postForm("/integrations/allowlist", url.Values{"entries": {"status.example.com"}, "revision": {rev}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("a settings change made the allowlist form stale: %d", resp.StatusCode)
	}
	// The same form again is stale now: the allowlist itself changed.
	p := b.post("/integrations/allowlist", url.Values{"entries": {"docs.example.com"}, "revision": {rev}})
	if p.status != http.StatusConflict {
		t.Fatalf("a stale allowlist form: %d", p.status)
	}
	if rows, _ := h.store.ListAllowlist(context.Background()); len(rows) != 1 {
		t.Fatalf("the stale save was applied: %d rows", len(rows))
	}
}
