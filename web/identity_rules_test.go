package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// TestFormsApplyTheSharedRules: the console accepts exactly the token
// names and passwords the application layer's rules accept (the command
// line's tests hold it to the same rules), at each rule's edges.
func TestFormsApplyTheSharedRules(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	for _, name := range []string{"bot-1", "B.o_t", strings.Repeat("a", app.MaxNameLength), strings.Repeat("b", app.MaxNameLength+1), "-bot", "bot/1", "bøt"} {
		want := http.StatusSeeOther // to the token's one-time view
		if app.CheckTokenName(name) != nil {
			want = http.StatusUnprocessableEntity
		}
		if p := b.post("/agents", url.Values{"name": {name}}); p.status != want {
			t.Errorf("token name %q: status %d, want %d", name, p.status, want)
		}
	}
	for i, pw := range []string{strings.Repeat("é", app.MinPasswordChars), strings.Repeat("é", app.MinPasswordChars-1), strings.Repeat("p", app.MaxPasswordBytes), strings.Repeat("p", app.MaxPasswordBytes+1)} {
		want := http.StatusSeeOther
		if app.CheckPassword(pw) != nil {
			want = http.StatusUnprocessableEntity
		}
		name := "user" + string(rune('a'+i))
		resp := b.postForm("/users", url.Values{"name": {name}, "role": {"support"}, "password": {pw}, "password2": {pw}})
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("password of %d chars, %d bytes: status %d, want %d", len([]rune(pw)), len(pw), resp.StatusCode, want)
		}
	}
}

// TestAccountPasswordShowsEveryProblem: a wrong current password and a
// weak new one are both named, and nothing changes or is recorded.
func TestAccountPasswordShowsEveryProblem(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	p := b.post("/account/password", url.Values{"current": {"wrong"}, "password": {"short"}, "password2": {"short"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "This is not your current password.") || !strings.Contains(p.body, "Use at least 10 characters.") {
		t.Fatalf("status %d; want 422 naming both problems:\n%s", p.status, p.body)
	}
	p = b.post("/account/password", url.Values{"current": {testPassword}, "password": {"new password 123"}, "password2": {"new password 124"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "The two passwords differ.") || strings.Contains(p.body, "not your current password") {
		t.Fatalf("differing repetition: status %d", p.status)
	}
	if rows := auditRows(t, h); len(rows) != 0 {
		t.Fatalf("refused changes were audited: %+v", rows)
	}
	if signedOut(b) {
		t.Fatal("a refused change signed the user out")
	}
}
