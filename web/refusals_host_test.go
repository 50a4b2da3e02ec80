package web

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

// A refusal the guard made before it named a host still shows the host
// its URL asked for, so support can tell the rows apart.
func TestRefusalLogHostFallsBackToTheURL(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name, host, url, want string
	}{
		{"host recorded", "intranet.corp", "http://intranet.corp/x", "intranet.corp"},
		{"other scheme", "", "ftp://10.0.0.9/", "10.0.0.9"},
		{"numeric host", "", "http://2130706433/", "2130706433"},
		{"IPv6 literal", "", "gopher://[fd00::1]:70/", "fd00::1"},
		{"no host at all", "", "mailto:help@example.com", "—"},
		{"unparseable", "", "http://exa mple.com/", "—"},
	}
	rows := make([]models.Refusal, len(tests))
	names := make([]string, len(tests))
	for i, tt := range tests {
		rows[i] = models.Refusal{Time: time.Date(2025, 3, 1, 10, i, 0, 0, time.UTC), Tool: "fetch_url", Host: tt.host, URL: tt.url, Code: "invalid", Reason: "scheme"}
		names[i] = tt.name
	}
	f := seedLog(t, h, names, rows)
	p := h.signedIn("sam", models.RoleSupport).get("/refusals")
	if p.status != http.StatusOK {
		t.Fatalf("status %d", p.status)
	}
	cells := map[string]string{}
	p.doc.Find(`[data-testid="refusal-row"]`).Each(func(_ int, r *goquery.Selection) {
		cells[r.AttrOr("data-id", "")] = strings.TrimSpace(r.Find(`[data-testid="refusal-host"]`).Text())
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cells[strconv.FormatInt(f.ids[tt.name], 10)]; got != tt.want {
				t.Errorf("Host cell for %s = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}
