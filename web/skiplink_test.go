package web

import (
	"testing"

	"github.com/outboundhq/outbound/models"
)

// TestSkipLinkIsTheFirstTabStop: on every signed-in page the first
// focusable element is a link to the page's content, so a keyboard user
// does not tab through the rail first (nine stops before).
func TestSkipLinkIsTheFirstTabStop(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	for _, path := range []string{"/integrations", "/integrations/http", "/refusals", "/audit", "/settings", "/agents", "/users", "/account"} {
		p := b.get(path)
		if p.status != 200 {
			t.Fatalf("%s: %d", path, p.status)
		}
		first := p.doc.Find("body").Find("a[href], button, input:not([type=hidden]), select, textarea").First()
		if href, _ := first.Attr("href"); href != "#main" || !first.HasClass("skip-link") {
			t.Errorf("%s: the first tab stop is %q (%s), not the skip link", path, first.Text(), href)
		}
		if p.doc.Find("main#main").Length() != 1 {
			t.Errorf("%s: no <main id=main> for the skip link to land on", path)
		}
	}
}
