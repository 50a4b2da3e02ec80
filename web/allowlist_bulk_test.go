package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// seedAllow adds entries (one per line) as ada and returns the revision.
func seedAllow(t *testing.T, h *harness, entries, note string) int64 {
	t.Helper()
	res, err := h.app.AddEntries(context.Background(), app.AddEntries{Entries: []string{entries}, Note: note, Actor: "ada", Version: models.AnyRevision})
	if err != nil {
		t.Fatal(err)
	}
	return res.Version
}

func shownEntries(p page) []string {
	var out []string
	p.doc.Find(`[data-testid="allow-entry"]`).Each(func(_ int, s *goquery.Selection) {
		if _, hidden := s.Attr("hidden"); !hidden {
			out = append(out, s.Find(`[data-testid="allow-entry-text"]`).Text())
		}
	})
	return out
}

func TestAllowlistNaturalOrderAndSearch(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	seedAllow(t, h, "host10.example.com\nhost2.example.com\nhost1.example.com", "")
	seedAllow(t, h, "docs.partner.net", "ticket OPS-7")
	p := b.get("/integrations")
	if got := strings.Join(shownEntries(p), " "); got != "docs.partner.net host1.example.com host2.example.com host10.example.com" {
		t.Fatalf("order %q", got)
	}
	p = b.get("/integrations?q=HOST1")
	if got := strings.Join(shownEntries(p), " "); got != "host1.example.com host10.example.com" {
		t.Fatalf("search HOST1 shows %q", got)
	}
	if got := p.doc.Find(`[data-testid="allow-search-count"]`).Text(); !strings.Contains(got, "2 of 4 entries match") {
		t.Errorf("count %q", got)
	}
	// A note matches too; the card still counts the whole list.
	p = b.get("/integrations?q=ops-7")
	if got := strings.Join(shownEntries(p), " "); got != "docs.partner.net" {
		t.Fatalf("search by note shows %q", got)
	}
	if badge := p.doc.Find(`[data-testid="egress-badge"]`).Text(); badge != "4 ALLOWED" {
		t.Errorf("badge under a search %q, want the whole list's", badge)
	}
	p = b.get("/integrations?q=nothing-matches")
	if len(shownEntries(p)) != 0 || p.doc.Find(`[data-testid="allow-empty"]`).Length() != 0 {
		t.Error("a search without matches must hide rows, not claim an empty list")
	}
}

func TestAllowlistNoteEditing(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	seedAllow(t, h, "status.example.com", "old note")
	list := b.get("/integrations")
	href, _ := list.doc.Find(`[data-testid="allow-note-edit"]`).Attr("href")
	form := b.get(href)
	if form.status != http.StatusOK || form.doc.Find(`input[name="note"]`).AttrOr("value", "") != "old note" {
		t.Fatalf("note form: %d", form.status)
	}
	rev := form.doc.Find(`input[name="revision"]`).AttrOr("value", "")
	// Too long: the form again, as typed.
	long := strings.Repeat("x", app.MaxNoteRunes+1)
	bad := b.post("/integrations/allowlist/note", url.Values{"entry": {"status.example.com"}, "note": {long}, "revision": {rev}})
	if bad.status != http.StatusUnprocessableEntity || bad.doc.Find(`input[name="note"]`).AttrOr("value", "") != long || bad.doc.Find(`[data-testid="note-error"]`).Length() != 1 {
		t.Fatalf("long note: %d", bad.status)
	}
	resp := b.postForm("/integrations/allowlist/note", url.Values{"entry": {"status.example.com"}, "note": {"ticket 9"}, "revision": {rev}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("save note: %d", resp.StatusCode)
	}
	if got := b.get("/integrations").doc.Find(`[data-testid="allow-entry-note"]`).Text(); !strings.Contains(got, "ticket 9") {
		t.Errorf("note shown %q", got)
	}
	// The same page again is stale now: conflict, note kept.
	stale := b.post("/integrations/allowlist/note", url.Values{"entry": {"status.example.com"}, "note": {"mine"}, "revision": {rev}})
	if stale.status != http.StatusConflict || stale.doc.Find(`input[name="note"]`).AttrOr("value", "") != "mine" {
		t.Errorf("stale note: %d", stale.status)
	}
	// Support users may not.
	sam := h.signedIn("sam", models.RoleSupport)
	if p := sam.get(href); p.status != http.StatusForbidden {
		t.Errorf("support user opened the note editor: %d", p.status)
	}
	if sam.get("/integrations").doc.Find(`[data-testid="allow-note-edit"], [data-testid="allow-pick"]`).Length() != 0 {
		t.Error("support users see edit links or checkboxes")
	}
	audits, _, _ := h.store.ListAudit(context.Background(), 0, 10)
	if audits[0].Action != app.ActionAllowlistNote || audits[0].After != "status.example.com (note: ticket 9)" {
		t.Errorf("audit %+v", audits[0])
	}
}

func TestAllowlistBulkRemove(t *testing.T) {
	h := newHarness(t)
	h.resolver.Answer("a.example.com", "93.184.216.34")
	b := h.signedIn("ada", models.RoleAdmin)
	rev := seedAllow(t, h, "a.example.com\nb.example.com\nc.example.com", "")
	revText := b.get("/integrations").doc.Find(`form#allow-bulk input[name="revision"]`).AttrOr("value", "")
	if revText == "" || b.get("/integrations").doc.Find(`input[form="allow-bulk"][name="entry"]`).Length() != 3 {
		t.Fatal("no bulk form or checkboxes")
	}
	picked := url.Values{"entry": {"a.example.com", "c.example.com"}, "revision": {revText}}
	confirm := b.post("/integrations/allowlist/remove-selected", picked)
	if confirm.status != http.StatusOK || confirm.doc.Find(`[data-testid="remove-many-list"] li`).Length() != 2 {
		t.Fatalf("confirm page: %d", confirm.status)
	}
	if st, _ := h.app.Allowlist(context.Background()); len(st.Rows) != 3 || st.Version != rev {
		t.Fatal("the confirmation page removed something")
	}
	picked.Set("confirmed", "yes")
	resp := b.postForm("/integrations/allowlist/remove-selected", picked)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove: %d", resp.StatusCode)
	}
	st, _ := h.app.Allowlist(context.Background())
	if got := strings.Join(app.EntryTexts(st.Rows), " "); got != "b.example.com" {
		t.Fatalf("left %q", got)
	}
	if d := h.guard.Decide(context.Background(), "https://a.example.com/"); d.Allowed {
		t.Error("the running guard still allows a removed entry")
	}
	audits, _, _ := h.store.ListAudit(context.Background(), 0, 10)
	if audits[0].Action != app.ActionAllowlistRemove || audits[1].Action != app.ActionAllowlistRemove || audits[2].Action != app.ActionAllowlistAdd {
		t.Errorf("audit: one record per removed entry expected: %+v", audits[:3])
	}
	// Stale page, nothing selected, an unknown entry: nothing removed.
	for _, tc := range []struct {
		form url.Values
		want int
	}{
		{url.Values{"entry": {"b.example.com"}, "revision": {revText}, "confirmed": {"yes"}}, http.StatusConflict},
		{url.Values{"revision": {b.get("/integrations").doc.Find(`form#allow-bulk input[name="revision"]`).AttrOr("value", "")}, "confirmed": {"yes"}}, http.StatusUnprocessableEntity},
		{url.Values{"entry": {"b.example.com", "zzz.example.com"}, "revision": {b.get("/integrations").doc.Find(`form#allow-bulk input[name="revision"]`).AttrOr("value", "")}, "confirmed": {"yes"}}, http.StatusNotFound},
	} {
		if p := b.post("/integrations/allowlist/remove-selected", tc.form); p.status != tc.want {
			t.Errorf("%v: %d, want %d", tc.form, p.status, tc.want)
		}
	}
	if st, _ := h.app.Allowlist(context.Background()); len(st.Rows) != 1 {
		t.Error("a refused bulk remove removed something")
	}
}
