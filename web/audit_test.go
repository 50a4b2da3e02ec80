package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

func TestAuditPageNewestFirstWithKeysetPaging(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	const total = auditPageSize*2 + 7
	start := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	records := make([]models.Audit, total)
	for i := range records {
		records[i] = models.Audit{Time: start.Add(time.Duration(i) * time.Minute), Actor: "ada", Action: "settings.set",
			Target: fmt.Sprintf("change-%03d", i), Before: fmt.Sprintf("old-%03d", i), After: fmt.Sprintf("new-%03d", i)}
	}
	if err := h.store.RecordAudit(context.Background(), records...); err != nil {
		t.Fatal(err)
	}

	var seen []string
	path, pages := "/audit", 0
	for path != "" {
		p := b.get(path)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d", path, p.status)
		}
		pages++
		p.doc.Find(`[data-testid="audit-row"]`).Each(func(_ int, row *goquery.Selection) {
			seen = append(seen, row.Find(`[data-testid="audit-target"]`).Text())
		})
		if pages > 1 && p.doc.Find(`[data-testid="audit-newest"]`).Length() != 1 {
			t.Fatalf("page %d has no link back to the newest", pages)
		}
		path = p.doc.Find(`[data-testid="audit-older"]`).AttrOr("href", "")
	}
	if pages != 3 || len(seen) != total {
		t.Fatalf("%d pages, %d rows; want 3 pages and %d rows", pages, len(seen), total)
	}
	for i, target := range seen {
		if want := fmt.Sprintf("change-%03d", total-1-i); target != want {
			t.Fatalf("row %d is %s, want %s (newest first, no gaps or repeats)", i, target, want)
		}
	}

	first := b.get("/audit").doc.Find(`[data-testid="audit-row"]`).First()
	for sel, want := range map[string]string{
		`[data-testid="audit-actor"]`:  "ada",
		`[data-testid="audit-action"]`: "settings.set",
		`[data-testid="audit-before"]`: fmt.Sprintf("old-%03d", total-1),
		`[data-testid="audit-after"]`:  fmt.Sprintf("new-%03d", total-1),
	} {
		if got := first.Find(sel).Text(); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	if !strings.Contains(first.Text(), "2025-03-01 10:46:00 UTC") {
		t.Errorf("time missing from %q", first.Text())
	}

	t.Run("a broken cursor is named", func(t *testing.T) {
		for _, bad := range []string{"abc", "-5", "0"} {
			p := b.get("/audit?before=" + bad)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, "is not a record number") {
				t.Fatalf("before=%s: %d", bad, p.status)
			}
		}
	})
	t.Run("past the end", func(t *testing.T) {
		p := b.get("/audit?before=1")
		if p.status != http.StatusOK || !strings.Contains(p.doc.Find(`[data-testid="audit-empty"]`).Text(), "no older changes") {
			t.Fatalf("status %d", p.status)
		}
	})
}

// TestAuditRecordsChangesButNeverSecrets drives every audited change of
// these pages and then looks for the secrets everywhere an audit shows.
func TestAuditRecordsChangesButNeverSecrets(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	const firstPW, resetPW = "initial secret 123", "reset secret 4567"

	_, token := createToken(t, b, "helpdesk-bot")
	steps := []struct {
		path string
		form url.Values
	}{
		{"/agents/revoke", url.Values{"name": {"helpdesk-bot"}, "confirmed": {"yes"}}},
		{"/users", url.Values{"name": {"sam"}, "role": {"support"}, "password": {firstPW}, "password2": {firstPW}}},
	}
	for _, s := range steps {
		if resp := b.postForm(s.path, s.form); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: %d", s.path, resp.StatusCode)
		}
	}
	for _, s := range []struct {
		action string
		form   url.Values
	}{
		{"password", url.Values{"password": {resetPW}, "password2": {resetPW}}},
		{"role", url.Values{"role": {"admin"}}},
		{"remove", url.Values{"confirmed": {"yes"}}},
	} {
		if resp := b.postForm(userURL(t, h, "sam", s.action), s.form); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: %d", s.action, resp.StatusCode)
		}
	}
	form := openSettings(t, b)
	form.Set("user_agent", "HelpdeskFetcher/2 (+https://example.com/bot)")
	if resp := b.postForm("/settings", form); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("settings: %d", resp.StatusCode)
	}

	want := []string{"token.create", "token.revoke", "user.add", "user.password", "user.role", "user.remove", "settings.set"}
	rows := auditRows(t, h)
	if len(rows) != len(want) {
		t.Fatalf("%d audit rows, want %d: %+v", len(rows), len(want), rows)
	}
	page := b.get("/audit")
	shown := page.doc.Find(`[data-testid="audit-action"]`)
	for i, action := range want {
		r := rows[len(rows)-1-i]
		if r.Action != action || r.Actor != "ada" {
			t.Errorf("row %d: %+v, want %s by ada", i, r, action)
		}
		if got := shown.Eq(len(rows) - 1 - i).Text(); got != action {
			t.Errorf("the page shows %q at row %d, want %q", got, len(rows)-1-i, action)
		}
	}
	for name, secret := range map[string]string{"token": token, "first password": firstPW, "reset password": resetPW} {
		for _, r := range rows {
			if strings.Contains(fmt.Sprintf("%+v", r), secret) {
				t.Errorf("the %s is in audit row %+v", name, r)
			}
		}
		if strings.Contains(page.body, secret) {
			t.Errorf("the %s is on the audit page", name)
		}
		if bytes.Contains(databaseBytes(t, h), []byte(secret)) {
			t.Errorf("the %s is in the database", name)
		}
	}
}

// adminRoutes is every route of the Settings, Agents, Users and Audit
// pages, with a form that would change something if it were accepted.
func adminRoutes(t *testing.T, h *harness) []struct {
	method, path string
	form         url.Values
} {
	sam := userURL(t, h, "sam", "")
	return []struct {
		method, path string
		form         url.Values
	}{
		{"GET", "/settings", nil},
		{"POST", "/settings", url.Values{"revision": {"0"}, "timeout": {"59s"}}},
		{"GET", "/agents", nil},
		{"POST", "/agents", url.Values{"name": {"forged-bot"}}},
		{"POST", "/agents/revoke", url.Values{"name": {"helpdesk-bot"}, "confirmed": {"yes"}}},
		{"GET", "/users", nil},
		{"POST", "/users", url.Values{"name": {"mallory"}, "role": {"admin"}, "password": {"forged password"}, "password2": {"forged password"}}},
		{"GET", sam, nil},
		{"POST", sam + "/role", url.Values{"role": {"admin"}}},
		{"POST", sam + "/password", url.Values{"password": {"forged password"}, "password2": {"forged password"}}},
		{"POST", sam + "/remove", url.Values{"confirmed": {"yes"}}},
		{"GET", "/audit", nil},
	}
}

// snapshot is everything these pages can change, to show a refused
// request changed none of it.
func snapshot(t *testing.T, h *harness) string {
	t.Helper()
	ctx := context.Background()
	users, err1 := h.store.ListUsers(ctx)
	toks, err2 := h.store.ListTokens(ctx)
	set, err3 := h.store.Settings(ctx)
	rev, err4 := h.store.Revision(ctx)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("%+v|%+v|%v|%d|%d", users, toks, set, rev, len(auditRows(t, h)))
}

func TestSupportIsRefusedEverywhere(t *testing.T) {
	h := newHarness(t)
	admin := h.signedIn("ada", models.RoleAdmin)
	createToken(t, admin, "helpdesk-bot")
	support := h.signedIn("sam", models.RoleSupport)
	before := snapshot(t, h)
	for _, r := range adminRoutes(t, h) {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			var p page
			if r.method == "GET" {
				p = support.get(r.path)
			} else {
				p = support.post(r.path, r.form)
			}
			if p.status != http.StatusForbidden || !strings.Contains(p.body, "Only admins can do this") {
				t.Fatalf("status %d, want 403", p.status)
			}
		})
	}
	if after := snapshot(t, h); after != before {
		t.Fatalf("refused requests changed the store:\nbefore %s\nafter  %s", before, after)
	}
	if signedOut(support) {
		t.Fatal("the refused requests signed sam out")
	}
}

func TestPostsWithoutCSRFAreRefused(t *testing.T) {
	h := newHarness(t)
	admin := h.signedIn("ada", models.RoleAdmin)
	createToken(t, admin, "helpdesk-bot")
	h.addUser("sam", models.RoleSupport)
	before := snapshot(t, h)
	for _, r := range adminRoutes(t, h) {
		if r.method != "POST" {
			continue
		}
		t.Run(r.path, func(t *testing.T) {
			p := readPage(t, admin.postRaw(r.path, r.form))
			if p.status != http.StatusForbidden || !strings.Contains(p.body, "security token") {
				t.Fatalf("status %d, want 403", p.status)
			}
		})
	}
	if after := snapshot(t, h); after != before {
		t.Fatalf("refused requests changed the store:\nbefore %s\nafter  %s", before, after)
	}
}
