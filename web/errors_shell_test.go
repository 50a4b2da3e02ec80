package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// A signed-in user's 403 and 404 keep the rail; a stranger's stay bare.
func TestErrorPagesInsideTheShell(t *testing.T) {
	h := newHarness(t)
	withIntegrations(t, h)
	ada := h.signedIn("ada", models.RoleAdmin)
	sam := h.signedIn("sam", models.RoleSupport)
	tests := []struct {
		name      string
		b         *browser
		path      string
		status    int
		shell     bool
		message   string
		next      string // the error page's link onward
		railMarks string // the rail item marked current, if any
	}{
		{"unknown path, admin", ada, "/nowhere", http.StatusNotFound, true, "There is no page at /nowhere.", "/integrations", ""},
		{"unknown path, support", sam, "/refusals/x/y", http.StatusNotFound, true, "There is no page at /refusals/x/y.", "/integrations", "/refusals"},
		{"admin page, support", sam, "/settings", http.StatusForbidden, true, "Only admins can do this.", "/integrations", ""},
		{"unknown integration", ada, "/integrations/http/nosuch", http.StatusNotFound, true, "There is no integration named nosuch.", "/integrations/http", "/integrations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.b.get(tt.path)
			if p.status != tt.status {
				t.Fatalf("status %d, want %d", p.status, tt.status)
			}
			if got := p.doc.Find("nav.rail").Length() == 1; got != tt.shell {
				t.Fatalf("rail shown = %v, want %v", got, tt.shell)
			}
			if !strings.Contains(p.doc.Find("main").Text(), tt.message) {
				t.Errorf("page lacks %q: %s", tt.message, p.doc.Find("main").Text())
			}
			if !tt.shell {
				return
			}
			if href := p.doc.Find(`[data-testid="error-next"]`).AttrOr("href", ""); href != tt.next {
				t.Errorf("link onward = %q, want %q", href, tt.next)
			}
			if tok := p.doc.Find(`form[action="/logout"] input[name="_csrf"]`).AttrOr("value", ""); tok == "" {
				t.Error("the rail's Sign out form has no CSRF token, so it would fail")
			}
			if got := p.doc.Find(`nav.rail a[aria-current="page"]`).AttrOr("href", ""); got != tt.railMarks {
				t.Errorf("rail marks %q, want %q", got, tt.railMarks)
			}
		})
	}
	t.Run("sign out works from a 404 page", func(t *testing.T) {
		b := h.signedIn("eve", models.RoleSupport)
		tok := b.get("/nowhere").doc.Find(`form[action="/logout"] input[name="_csrf"]`).AttrOr("value", "")
		res := b.postRaw("/logout", map[string][]string{"_csrf": {tok}})
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Errorf("sign out from the 404 page: status %d, want 303", res.StatusCode)
		}
	})
}

// Emptying the list is an admin's action, so only admins are told how.
func TestPublicWebHintIsForAdmins(t *testing.T) {
	h := newHarness(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "status.example.com", "")
	const hint = "Remove every listed entry to go back to PUBLIC WEB."
	tests := []struct {
		name string
		b    *browser
		want bool
	}{
		{"admin", ada, true},
		{"support", h.signedIn("sam", models.RoleSupport), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := tt.b.get("/integrations").doc.Find(`[data-testid="egress-state"]`).Text()
			if !strings.Contains(state, "listed host") {
				t.Fatalf("state = %q, want the list's description", state)
			}
			if got := strings.Contains(state, hint); got != tt.want {
				t.Errorf("hint shown = %v, want %v: %q", got, tt.want, state)
			}
		})
	}
}
