package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// The icon needs no session: a browser fetches it before anyone signs in.
func TestFaviconWithoutASession(t *testing.T) {
	h := newHarness(t)
	b := h.browser()
	res, err := b.client.Get(h.srv.URL + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/static/favicon.svg" {
		t.Fatalf("/favicon.ico: %d → %q, want 301 to /static/favicon.svg", res.StatusCode, res.Header.Get("Location"))
	}
	res, err = b.client.Get(h.srv.URL + "/static/favicon.svg")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/svg+xml") || !strings.Contains(string(body), "<svg") {
		t.Fatalf("/static/favicon.svg: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if href := b.get("/login").doc.Find(`link[rel="icon"]`).AttrOr("href", ""); href != "/static/favicon.svg" {
		t.Errorf("the sign-in page links the icon as %q", href)
	}
	if href := h.signedIn("ada", models.RoleAdmin).get("/integrations").doc.Find(`link[rel="icon"]`).AttrOr("href", ""); href != "/static/favicon.svg" {
		t.Errorf("the shell links the icon as %q", href)
	}
}
