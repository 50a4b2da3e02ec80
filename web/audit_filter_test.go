package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

func auditTargets(p page) []string {
	var out []string
	p.doc.Find(`[data-testid="audit-target"]`).Each(func(_ int, s *goquery.Selection) { out = append(out, s.Text()) })
	return out
}

// TestAuditFilters: actor, action and time range select exactly the
// matching records; a bad value is explained and shows no rows; paging
// keeps the filters.
func TestAuditFilters(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	recs := []models.Audit{
		{Time: day.Add(9 * time.Hour), Actor: "ada", Action: "allowlist.add", Target: "a1"},
		{Time: day.Add(10 * time.Hour), Actor: "bob", Action: "allowlist.add", Target: "b1"},
		{Time: day.AddDate(0, 0, 1).Add(9 * time.Hour), Actor: "ada", Action: "settings.set", Target: "a2"},
		{Time: day.AddDate(0, 0, 2).Add(9 * time.Hour), Actor: "bob", Action: "allowlist.remove", Target: "b2"},
	}
	if err := h.store.RecordAudit(context.Background(), recs...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"actor=ada", "a2 a1"},
		{"action=allowlist.add", "b1 a1"},
		{"actor=bob&action=allowlist.add", "b1"},
		{"from=2025-03-02&to=2025-03-03", "b2 a2"},
		{"to=2025-03-01", "b1 a1"},
		{"from=2025-03-01T10:00", "b2 a2 b1"},
	} {
		p := ada.get("/audit?" + tc.query)
		if got := strings.Join(auditTargets(p), " "); p.status != http.StatusOK || got != tc.want {
			t.Errorf("%s: %d %q, want %q", tc.query, p.status, got, tc.want)
		}
	}
	p := ada.get("/audit?actor=ada")
	if sel := p.doc.Find(`select[name="actor"] option[selected]`).AttrOr("value", ""); sel != "ada" {
		t.Errorf("the actor menu does not show the filter: %q", sel)
	}
	if n := p.doc.Find(`select[name="action"] option`).Length(); n != 4 {
		t.Errorf("action menu has %d options, want any + 3 recorded", n)
	}
	for _, tc := range []struct{ query, field string }{
		{"action=nope", "audit-error-action"},
		{"from=yesterday", "audit-error-from"},
		{"from=2025-03-03&to=2025-03-01", "audit-error-to"},
	} {
		p := ada.get("/audit?" + tc.query)
		if p.status != http.StatusBadRequest || p.doc.Find(`[data-testid="`+tc.field+`"]`).Length() != 1 || len(auditTargets(p)) != 0 {
			t.Errorf("%s: %d, want 400 with %s and no rows", tc.query, p.status, tc.field)
		}
	}
	// Paging keeps the filters.
	for i := 0; i < auditPageSize+3; i++ {
		if err := h.store.RecordAudit(context.Background(), models.Audit{Time: day.AddDate(0, 0, 5), Actor: "carol", Action: "token.create", Target: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	first := ada.get("/audit?actor=carol")
	older, _ := first.doc.Find(`[data-testid="audit-older"]`).Attr("href")
	if !strings.Contains(older, "actor=carol") || !strings.Contains(older, "before=") {
		t.Fatalf("older link %q drops the filter", older)
	}
	second := ada.get(older)
	if len(auditTargets(second)) != 3 {
		t.Errorf("second page: %d rows, want 3", len(auditTargets(second)))
	}
	if newest, _ := second.doc.Find(`[data-testid="audit-newest"]`).Attr("href"); newest != "/audit?actor=carol" {
		t.Errorf("newest link %q", newest)
	}
}
