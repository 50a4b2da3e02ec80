package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// TestRefusalLogBulkReview: support ticks rows of a filtered log, gives
// them one verdict, and is back on the same filtered log; a review that
// cannot be saved keeps the selection and comment, and saves nothing.
func TestRefusalLogBulkReview(t *testing.T) {
	h := newHarness(t)
	f := standardLog(t, h)
	sam := h.signedIn("sam", models.RoleSupport)
	log := sam.get("/refusals?agent=triage")
	if log.doc.Find(`input[form="refusal-bulk"][name="id"]`).Length() != 2 {
		t.Fatalf("checkboxes: %d", log.doc.Find(`input[form="refusal-bulk"][name="id"]`).Length())
	}
	back := log.doc.Find(`form#refusal-bulk input[name="back"]`).AttrOr("value", "")
	if back != "agent=triage" {
		t.Fatalf("back %q", back)
	}
	ids := []string{strconv.FormatInt(f.ids["metadata"], 10), strconv.FormatInt(f.ids["bad-scheme"], 10)}

	// No verdict: the form again, selection and comment kept.
	p := sam.post("/refusals/review", url.Values{"id": ids, "comment": {"OPS-9"}, "back": {back}})
	if p.status != http.StatusUnprocessableEntity || p.doc.Find(`[data-testid="bulk-error-status"]`).Length() != 1 ||
		p.doc.Find(`input[type=hidden][name="id"]`).Length() != 2 || !strings.Contains(p.doc.Find("textarea[name=comment]").Text(), "OPS-9") {
		t.Fatalf("no verdict: %d\n%s", p.status, p.body)
	}
	// Nothing ticked.
	if p := sam.post("/refusals/review", url.Values{"verdict": {"expected"}, "back": {back}}); p.status != http.StatusUnprocessableEntity || p.doc.Find(`[data-testid="bulk-error-refusals"]`).Length() != 1 {
		t.Errorf("no selection: %d", p.status)
	}
	// One unknown ID: nothing saved.
	if p := sam.post("/refusals/review", url.Values{"id": {ids[0], "99999"}, "verdict": {"expected"}}); p.status != http.StatusNotFound {
		t.Errorf("unknown refusal: %d", p.status)
	}
	if r, _ := h.store.RefusalByID(context.Background(), f.ids["metadata"]); r.Status != models.StatusUnreviewed {
		t.Fatal("a refused bulk review saved something")
	}

	resp := sam.postForm("/refusals/review", url.Values{"id": ids, "verdict": {"expected"}, "comment": {"OPS-9"}, "back": {back}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/refusals?agent=triage" {
		t.Fatalf("bulk review: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, name := range []string{"metadata", "bad-scheme"} {
		if r, _ := h.store.RefusalByID(context.Background(), f.ids[name]); r.Status != models.StatusExpected || r.Comment != "OPS-9" || r.ReviewedBy != "sam" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if r, _ := h.store.RefusalByID(context.Background(), f.ids["timeout"]); r.Status != models.StatusUnreviewed {
		t.Error("an unticked refusal was reviewed")
	}
	audits, _, _ := h.store.ListAudit(context.Background(), 0, 10)
	if len(audits) != 2 || audits[0].Action != app.ActionRefusalReview || audits[1].Action != app.ActionRefusalReview {
		t.Errorf("audit: %+v", audits)
	}
	if got := sam.get("/refusals?agent=triage").doc.Find(`[data-testid="flash"]`).Text(); !strings.Contains(got, "2 refusals marked Expected") {
		t.Errorf("flash %q", got)
	}
}
