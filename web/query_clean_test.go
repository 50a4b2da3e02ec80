package web

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

// TestFilterLinksCarryNoEmptyParameters: the filter form submitted as a
// browser does (every field, most empty) lands on a link that names only
// the filters that apply, and the page's own links carry none either.
func TestFilterLinksCarryNoEmptyParameters(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	standardLog(t, h)
	for _, tc := range []struct{ in, want string }{
		{"/refusals?code=&reason=&kind=&tool=&agent=&host=example.com&from=&to=&status=", "/refusals?host=example.com"},
		{"/refusals?code=&reason=", "/refusals"},
		{"/audit?actor=&action=&from=&to=", "/audit"},
		{"/audit?actor=ada&action=&from=&to=", "/audit?actor=ada"},
	} {
		p := b.get(tc.in)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != tc.want {
			t.Errorf("GET %s: %d to %q, want 303 to %q", tc.in, p.status, p.header.Get("Location"), tc.want)
		}
	}
	// A clean link is answered, not redirected.
	if p := b.get("/refusals?host=example.com"); p.status != http.StatusOK {
		t.Fatalf("clean link: %d", p.status)
	}
	p := b.get("/refusals?agent=helpdesk")
	links := 0
	p.doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		u, err := url.Parse(href)
		if err != nil {
			t.Fatalf("link %q: %v", href, err)
		}
		if u.RawQuery != "" {
			links++
		}
		if _, dropped := withoutEmptyParams(u.Query()); dropped || u.RawQuery == "" && href[len(href)-1] == '?' {
			t.Errorf("link %q carries an empty parameter", href)
		}
	})
	if links < 4 {
		t.Fatalf("only %d links with a query: the check above proves little", links)
	}
	if _, ok := p.doc.Find(`form[data-testid="refusal-filters"]`).Attr("data-drop-empty"); !ok {
		t.Error("the filter form is not marked for app.js to drop its empty fields")
	}
}
