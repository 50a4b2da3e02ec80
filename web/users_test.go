package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/models"
)

func userID(t *testing.T, h *harness, name string) int64 {
	t.Helper()
	u, err := h.store.UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

func userURL(t *testing.T, h *harness, name, action string) string {
	t.Helper()
	p := "/users/" + strconv.FormatInt(userID(t, h, name), 10)
	if action != "" {
		p += "/" + action
	}
	return p
}

// signInAgain opens a second browser signed in as an existing user.
func (h *harness) signInAgain(name, password string) *browser {
	h.t.Helper()
	b := h.browser()
	resp := b.postForm("/login", url.Values{"name": {name}, "password": {password}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("sign in as %s: %d", name, resp.StatusCode)
	}
	return b
}

func signedOut(b *browser) bool {
	p := b.get("/account")
	return p.status == http.StatusSeeOther && strings.HasPrefix(p.header.Get("Location"), "/login")
}

func TestAddUserValidation(t *testing.T) {
	const good = "a good long password"
	tests := []struct {
		name                      string
		user, role, pw, pw2, want string
		field                     string
	}{
		{"no name", "", "support", good, good, "Enter a name.", "name"},
		{"name with space", "sam smith", "support", good, good, "without spaces", "name"},
		{"name too long", strings.Repeat("n", 65), "support", good, good, "at most 64 characters", "name"},
		{"name taken", "ada", "support", good, good, "A user named ada already exists", "name"},
		{"unknown role", "sam", "root", good, good, "Choose a role: admin or support.", "role"},
		{"short password", "sam", "support", "short", "short", "at least 10 characters", "password"},
		{"passwords differ", "sam", "support", good, good + "!", "The two passwords differ.", "password"},
		{"password over 72 bytes", "sam", "support", strings.Repeat("p", 73), strings.Repeat("p", 73), "at most 72 bytes", "password"},
	}
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.post("/users", url.Values{"name": {tt.user}, "role": {tt.role}, "password": {tt.pw}, "password2": {tt.pw2}})
			if p.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", p.status)
			}
			form := p.doc.Find(`[data-testid="user-add-form"]`)
			field := form.Find(`[name="` + tt.field + `"]`).Parent()
			if msg := field.Find(".field-error").Text(); !strings.Contains(msg, tt.want) {
				t.Fatalf("%s error %q, want %q", tt.field, msg, tt.want)
			}
			if got := form.Find(`input[name="name"]`).AttrOr("value", ""); got != tt.user {
				t.Fatalf("typed name lost: %q", got)
			}
			if strings.Contains(p.body, tt.pw) && len(tt.pw) >= 10 {
				t.Fatal("the typed password is sent back to the browser")
			}
		})
	}
	if n, _ := h.store.CountUsers(context.Background()); n != 1 {
		t.Fatalf("%d users, want only ada", n)
	}
	if rows := auditRows(t, h); len(rows) != 0 {
		t.Fatalf("refused adds were audited: %+v", rows)
	}
}

func TestAddUser(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	const pw = "first password 1"
	resp := b.postForm("/users", url.Values{"name": {" sam "}, "role": {"support"}, "password": {pw}, "password2": {pw}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/users" {
		t.Fatalf("add: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	u, err := h.store.UserByName(context.Background(), "sam")
	if err != nil || u.Role != models.RoleSupport {
		t.Fatalf("sam: %+v %v", u, err)
	}
	if cost, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil || cost != bcrypt.MinCost {
		t.Fatalf("hash cost %d %v, want the harness's cost %d", cost, err, bcrypt.MinCost)
	}
	p := b.get("/users")
	if flash := p.doc.Find(`[data-testid="flash"]`).Text(); !strings.Contains(flash, "sam can sign in now as support") {
		t.Fatalf("flash %q", flash)
	}
	names := p.doc.Find(`[data-testid="user-row"] [data-testid="user-name"]`).Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	if strings.Join(names, ",") != "ada,sam" {
		t.Fatalf("listed %v", names)
	}
	rows := auditRows(t, h)
	if len(rows) != 1 || rows[0].Action != "user.add" || rows[0].Target != "sam" || rows[0].After != "role support" || rows[0].Actor != "ada" {
		t.Fatalf("audit %+v", rows)
	}
	if sam := h.signInAgain("sam", pw); signedOut(sam) {
		t.Fatal("the new user cannot sign in")
	}
}

func TestChangeRole(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	h.addUser("sam", models.RoleSupport)

	t.Run("support to admin", func(t *testing.T) {
		resp := b.postForm(userURL(t, h, "sam", "role"), url.Values{"role": {"admin"}})
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if u, _ := h.store.UserByName(context.Background(), "sam"); u.Role != models.RoleAdmin {
			t.Fatalf("role %s", u.Role)
		}
		rows := auditRows(t, h)
		if len(rows) != 1 || rows[0].Action != "user.role" || rows[0].Before != "role support" || rows[0].After != "role admin" {
			t.Fatalf("audit %+v", rows)
		}
	})
	t.Run("same role changes nothing", func(t *testing.T) {
		resp := b.postForm(userURL(t, h, "sam", "role"), url.Values{"role": {"admin"}})
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(auditRows(t, h)) != 1 {
			t.Fatalf("status %d, %d audit rows", resp.StatusCode, len(auditRows(t, h)))
		}
	})
	t.Run("unknown role", func(t *testing.T) {
		p := b.post(userURL(t, h, "sam", "role"), url.Values{"role": {"owner"}})
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.doc.Find(`[data-testid="user-error"]`).Text(), "is not a role; choose admin or support") {
			t.Fatalf("status %d", p.status)
		}
		if u, _ := h.store.UserByName(context.Background(), "sam"); u.Role != models.RoleAdmin {
			t.Fatalf("role %s", u.Role)
		}
	})
	t.Run("demoting self when another admin exists", func(t *testing.T) {
		resp := b.postForm(userURL(t, h, "ada", "role"), url.Values{"role": {"support"}})
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/integrations" {
			t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
		if p := b.get("/users"); p.status != http.StatusForbidden {
			t.Fatalf("the demoted admin still sees Users: %d", p.status)
		}
	})
}

func TestLastAdminIsKept(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	h.addUser("sam", models.RoleSupport)
	page := b.get(userURL(t, h, "ada", ""))
	if page.doc.Find(`[data-testid="only-admin"]`).Length() != 1 || page.doc.Find(`[data-testid="user-remove-form"]`).Length() != 0 {
		t.Fatal("the only admin's page offers role change or removal")
	}
	tests := []struct {
		name, action string
		form         url.Values
	}{
		{"demote", "role", url.Values{"role": {"support"}}},
		{"remove", "remove", url.Values{"confirmed": {"yes"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.post(userURL(t, h, "ada", tt.action), tt.form)
			if p.status != http.StatusConflict {
				t.Fatalf("status %d, want 409", p.status)
			}
			if msg := p.doc.Find(`[data-testid="user-error"]`).Text(); !strings.Contains(msg, "ada is the last admin") || !strings.Contains(msg, "Make another user admin first") {
				t.Fatalf("message %q", msg)
			}
			if u, err := h.store.UserByName(context.Background(), "ada"); err != nil || u.Role != models.RoleAdmin {
				t.Fatalf("ada changed: %+v %v", u, err)
			}
			if signedOut(b) {
				t.Fatal("the refused change signed ada out")
			}
		})
	}
	if rows := auditRows(t, h); len(rows) != 0 {
		t.Fatalf("refused changes were audited: %+v", rows)
	}
}

func TestResetPasswordEndsTheUsersSessions(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	sam := h.signedIn("sam", models.RoleSupport)
	if signedOut(sam) {
		t.Fatal("sam is not signed in to begin with")
	}
	const newPW = "brand new secret 42"

	bad := b.post(userURL(t, h, "sam", "password"), url.Values{"password": {newPW}, "password2": {"something else"}})
	if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.doc.Find(`[data-testid="user-password-form"] .field-error`).Text(), "The two passwords differ.") {
		t.Fatalf("mismatch: %d", bad.status)
	}
	if signedOut(sam) {
		t.Fatal("a refused reset signed sam out")
	}

	resp := b.postForm(userURL(t, h, "sam", "password"), url.Values{"password": {newPW}, "password2": {newPW}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset: %d", resp.StatusCode)
	}
	if !signedOut(sam) {
		t.Fatal("sam's browser is still signed in after the reset")
	}
	if signedOut(b) {
		t.Fatal("resetting someone else's password signed the admin out")
	}
	if p := h.browser().post("/login", url.Values{"name": {"sam"}, "password": {testPassword}}); p.status != http.StatusUnauthorized {
		t.Fatalf("the old password still works: %d", p.status)
	}
	h.signInAgain("sam", newPW)
	rows := auditRows(t, h)
	if len(rows) != 1 || rows[0].Action != "user.password" || rows[0].Target != "sam" || !strings.Contains(rows[0].After, "sessions ended") {
		t.Fatalf("audit %+v", rows)
	}
}

func TestRemoveUser(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	sam := h.signedIn("sam", models.RoleSupport)
	manage := b.get(userURL(t, h, "sam", ""))
	if q := manage.doc.Find(`[data-testid="user-remove-form"]`).AttrOr("data-confirm", ""); !strings.Contains(q, "Remove sam?") {
		t.Fatalf("no confirm question: %q", q)
	}

	confirm := b.post(userURL(t, h, "sam", "remove"), url.Values{})
	if confirm.status != http.StatusOK {
		t.Fatalf("confirmation page: %d", confirm.status)
	}
	if _, err := h.store.UserByName(context.Background(), "sam"); err != nil {
		t.Fatal("sam was removed before confirmation")
	}
	form := formValues(t, confirm, `form[action="`+userURL(t, h, "sam", "remove")+`"]`)
	if form.Get("confirmed") != "yes" {
		t.Fatalf("confirmation form %v", form)
	}
	samRole := userURL(t, h, "sam", "role")
	resp := b.postForm(userURL(t, h, "sam", "remove"), form)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/users" {
		t.Fatalf("remove: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, err := h.store.UserByName(context.Background(), "sam"); err == nil {
		t.Fatal("sam still exists")
	}
	if !signedOut(sam) {
		t.Fatal("the removed user's browser is still signed in")
	}
	rows := auditRows(t, h)
	if len(rows) != 1 || rows[0].Action != "user.remove" || rows[0].Before != "role support" || rows[0].After != "removed" {
		t.Fatalf("audit %+v", rows)
	}
	if p := b.get("/users/999999"); p.status != http.StatusNotFound {
		t.Fatalf("a missing user's page: %d", p.status)
	}
	if p := b.post(samRole, url.Values{"role": {"admin"}}); p.status != http.StatusConflict || !strings.Contains(p.body, "someone removed them meanwhile") {
		t.Fatalf("a change to a removed user: %d", p.status)
	}
}

func TestRemoveSelfSignsOut(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	h.addUser("grace", models.RoleAdmin)
	resp := b.postForm(userURL(t, h, "ada", "remove"), url.Values{"confirmed": {"yes"}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("self removal: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if !signedOut(b) {
		t.Fatal("the removed admin is still signed in")
	}
	if u, err := h.store.UserByName(context.Background(), "grace"); err != nil || u.Role != models.RoleAdmin {
		t.Fatal("the other admin is gone")
	}
}
