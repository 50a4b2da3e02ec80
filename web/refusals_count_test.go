package web

import (
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

// A row that stands for a burst of alike refusals (the log's aggregation)
// shows how many on the log page, the detail page and in the export; a
// single refusal shows no count.
func TestAnAggregatedRowShowsItsCount(t *testing.T) {
	h := newHarness(t)
	first := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	last := first.Add(900 * time.Millisecond)
	rows := []models.Refusal{
		{Time: first.Add(-time.Second), Tool: "proxy", Agent: "bot", Host: "once.example", URL: "http://once.example/", Code: "forbidden", Reason: "not_allowlisted", Proxied: true},
		{Time: first, Tool: "proxy", Agent: "bot", Host: "flood.example", URL: "http://flood.example/1", Code: "forbidden", Reason: "not_allowlisted", Proxied: true,
			Count: 1532, LastTime: &last},
	}
	if err := h.store.InsertRefusals(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	admin := h.signedIn("ada", models.RoleAdmin)
	list := admin.get("/refusals")
	counts := list.doc.Find(`[data-testid="refusal-count"]`)
	if counts.Length() != 1 || strings.TrimSpace(counts.Text()) != "×1,532" {
		t.Fatalf("counts on the log page: %d, %q; want one, ×1,532", counts.Length(), counts.Text())
	}
	if title := counts.AttrOr("title", ""); !strings.Contains(title, "decision log has a line for each") {
		t.Errorf("the count's title %q does not explain it", title)
	}
	href := counts.Closest("tr").Find(".refusal-url a").AttrOr("href", "")
	if !strings.HasPrefix(href, "/refusals/") {
		t.Fatalf("the flood's row links to %q", href)
	}
	detail := admin.get(href)
	if got := strings.TrimSpace(detail.doc.Find(`[data-testid="detail-count"]`).Text()); !strings.HasPrefix(got, "×1,532") {
		t.Errorf("detail count %q, want ×1,532…", got)
	}
	p := admin.get("/refusals.csv")
	recs, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	ci, li := slices.Index(recs[0], "count"), slices.Index(recs[0], "last_time_utc")
	if ci < 0 || li < 0 || len(recs) != 3 {
		t.Fatalf("export header %q, %d records", recs[0], len(recs))
	}
	// Newest first: the flood, then the single one.
	if recs[1][ci] != "1532" || recs[1][li] != last.Format(time.RFC3339) || recs[2][ci] != "1" || recs[2][li] != "" {
		t.Errorf("export counts %q %q / %q %q; want 1532 with its last time, then 1 with none", recs[1][ci], recs[1][li], recs[2][ci], recs[2][li])
	}
}
