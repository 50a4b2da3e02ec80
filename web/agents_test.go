package web

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// createToken posts the create form and returns the one page that shows
// the token, and the token.
func createToken(t *testing.T, b *browser, name string) (page, string) {
	t.Helper()
	resp := b.postForm("/agents", url.Values{"name": {name}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/agents/new/") {
		t.Fatalf("create token %s: %d %q, want 303 to its one-time view", name, resp.StatusCode, resp.Header.Get("Location"))
	}
	p := b.get(resp.Header.Get("Location"))
	if p.status != http.StatusOK {
		t.Fatalf("the token's one-time view: %d", p.status)
	}
	token := strings.TrimSpace(p.doc.Find(`[data-testid="new-token"]`).Text())
	if !strings.HasPrefix(token, tools.TokenPrefix) {
		t.Fatalf("the page shows %q, not a token", token)
	}
	return p, token
}

// databaseBytes is everything the store has written to disk: the database
// file and its write-ahead log.
func databaseBytes(t *testing.T, h *harness) []byte {
	t.Helper()
	var all []byte
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(h.store.Path() + suffix)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

func TestCreateTokenShowsItOnceAndStoresOnlyItsHash(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	created := b.postForm("/agents", url.Values{"name": {"helpdesk-bot"}})
	created.Body.Close()
	view := created.Header.Get("Location")
	if created.StatusCode != http.StatusSeeOther || !strings.HasPrefix(view, "/agents/new/") {
		t.Fatalf("create: %d Location=%q; want 303 to the one-time view", created.StatusCode, view)
	}
	resp, err := b.client.Get(h.srv.URL + view)
	if err != nil {
		t.Fatal(err)
	}
	p := readPage(t, resp)
	if p.status != http.StatusOK {
		t.Fatalf("the one-time view: %d", p.status)
	}
	if cc := p.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q: the token page must not be cached", cc)
	}
	token := strings.TrimSpace(p.doc.Find(`[data-testid="new-token"]`).Text())
	if !strings.HasPrefix(token, tools.TokenPrefix) || len(token) < 40 {
		t.Fatalf("token %q", token)
	}
	if strings.Contains(view, token) {
		t.Fatal("the token is in the view's URL")
	}
	for _, ck := range append(created.Cookies(), resp.Cookies()...) {
		if strings.Contains(ck.Value, token) || strings.Contains(ck.Value, url.QueryEscape(token)) {
			t.Fatalf("the token is in cookie %s", ck.Name)
		}
	}
	copyBtn := p.doc.Find(`button[data-copy="new-token"]`)
	if copyBtn.Length() != 1 || p.doc.Find("#new-token").Length() != 1 {
		t.Fatal("no copy button wired to the token")
	}
	if got := p.doc.Find(`[data-testid="mcp-url"]`).Text(); got != h.srv.URL+"/mcp" {
		t.Fatalf("MCP URL %q, want %q", got, h.srv.URL+"/mcp")
	}
	for _, want := range []string{"Authorization: Bearer " + token, "curl -sS " + h.srv.URL + "/api/v1/tools/fetch_url", `"url": "https://example.com/"`} {
		if !strings.Contains(p.doc.Text(), want) {
			t.Errorf("the instructions lack %q", want)
		}
	}

	toks, err := h.store.ListTokens(context.Background())
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens %+v %v", toks, err)
	}
	if toks[0].Hash != tools.HashToken(token) || toks[0].Name != "helpdesk-bot" {
		t.Fatalf("stored %+v, want the hash of the shown token", toks[0])
	}
	if _, err := h.store.FindActiveToken(context.Background(), tools.HashToken(token)); err != nil {
		t.Fatalf("the shown token does not verify: %v", err)
	}
	disk := databaseBytes(t, h)
	if !bytes.Contains(disk, []byte(tools.HashToken(token))) {
		t.Fatal("the hash is not found on disk either: the scan below proves nothing")
	}
	if bytes.Contains(disk, []byte(token)) || bytes.Contains(disk, []byte(strings.TrimPrefix(token, tools.TokenPrefix))) {
		t.Fatal("the token text is stored in the database")
	}

	list := b.get("/agents")
	if strings.Contains(list.body, token) {
		t.Fatal("the list page shows the token again")
	}
	row := list.doc.Find(`[data-testid="token-row"]`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "helpdesk-bot") || row.Find(`[data-testid="token-state"]`).Text() != "active" || !strings.Contains(row.Text(), "never") {
		t.Fatalf("token row: %q", row.Text())
	}
	rows := auditRows(t, h)
	if len(rows) != 1 || rows[0].Action != "token.create" || rows[0].Target != "helpdesk-bot" || rows[0].After != "active" || rows[0].Actor != "ada" {
		t.Fatalf("audit %+v", rows)
	}
}

func TestCreateTokenRejectsBadNames(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"empty", "", "Enter a name for the agent"},
		{"blank", "   ", "Enter a name for the agent"},
		{"space inside", "help desk", `"help desk" is not a token name`},
		{"slash", "bots/one", `"bots/one" is not a token name`},
		{"leading dot", ".hidden", "starting with a letter or digit"},
		{"non ascii", "bøt", "is not a token name"},
		{"too long", strings.Repeat("a", 65), "use at most 64"},
		{"taken", "helpdesk-bot", `A token named "helpdesk-bot" already exists`},
	}
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	createToken(t, b, "helpdesk-bot")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.post("/agents", url.Values{"name": {tt.input}})
			if p.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", p.status)
			}
			form := p.doc.Find(`[data-testid="agent-form"]`)
			if msg := form.Find(`[data-testid="field-error"]`).Text(); !strings.Contains(msg, tt.want) {
				t.Fatalf("error %q, want %q", msg, tt.want)
			}
			if got := form.Find(`input[name="name"]`).AttrOr("value", ""); got != strings.TrimSpace(tt.input) {
				t.Fatalf("typed name lost: %q", got)
			}
			if p.doc.Find(`[data-testid="new-token"]`).Length() != 0 {
				t.Fatal("a token was shown")
			}
		})
	}
	if toks, _ := h.store.ListTokens(context.Background()); len(toks) != 1 {
		t.Fatalf("%d tokens, want only the first", len(toks))
	}
	if rows := auditRows(t, h); len(rows) != 1 {
		t.Fatalf("refused creates were audited: %+v", rows)
	}
}

func TestRevokeTokenAsksFirstThenRefusesTheAgent(t *testing.T) {
	h := newHarness(t)
	b := h.signedIn("ada", models.RoleAdmin)
	_, token := createToken(t, b, "helpdesk-bot")
	list := b.get("/agents")
	revoke := formValues(t, list, `form[action="/agents/revoke"]`)
	if q := list.doc.Find(`form[action="/agents/revoke"]`).AttrOr("data-confirm", ""); !strings.Contains(q, "helpdesk-bot") {
		t.Fatalf("the revoke form has no confirm question: %q", q)
	}

	// Without script, the post shows a confirmation page and changes nothing.
	confirm := b.post("/agents/revoke", revoke)
	if confirm.status != http.StatusOK {
		t.Fatalf("confirmation page: %d", confirm.status)
	}
	if _, err := h.store.FindActiveToken(context.Background(), tools.HashToken(token)); err != nil {
		t.Fatal("the token was revoked before confirmation")
	}
	confirmed := formValues(t, confirm, `form[action="/agents/revoke"]`)
	if confirmed.Get("confirmed") != "yes" || confirmed.Get("name") != "helpdesk-bot" {
		t.Fatalf("confirmation form %v", confirmed)
	}

	resp := b.postForm("/agents/revoke", confirmed)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if _, err := h.store.FindActiveToken(context.Background(), tools.HashToken(token)); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("the revoked token still verifies: %v", err)
	}
	p := b.get("/agents")
	if st := p.doc.Find(`[data-testid="token-state"]`).Text(); st != "revoked" {
		t.Fatalf("state %q", st)
	}
	if p.doc.Find(`form[action="/agents/revoke"]`).Length() != 0 {
		t.Fatal("a revoked token still offers Revoke")
	}
	if flash := p.doc.Find(`[data-testid="flash"]`).Text(); !strings.Contains(flash, "helpdesk-bot is revoked") {
		t.Fatalf("flash %q", flash)
	}
	rows := auditRows(t, h)
	if len(rows) != 2 || rows[0].Action != "token.revoke" || rows[0].Before != "active" || rows[0].After != "revoked" {
		t.Fatalf("audit %+v", rows)
	}

	t.Run("again is a no-op", func(t *testing.T) {
		resp := b.postForm("/agents/revoke", confirmed)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || len(auditRows(t, h)) != 2 {
			t.Fatalf("second revoke: %d, audit rows %d", resp.StatusCode, len(auditRows(t, h)))
		}
	})
	t.Run("an unknown name is named", func(t *testing.T) {
		p := b.post("/agents/revoke", url.Values{"name": {"ghost"}, "confirmed": {"yes"}})
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `There is no token named &#34;ghost&#34;`) {
			t.Fatalf("unknown token: %d", p.status)
		}
	})
}

// TestTokenNeverReachesTheLog runs the console with a debug log kept in
// memory, creates and revokes a token, and looks for it in the log.
func TestTokenNeverReachesTheLog(t *testing.T) {
	base := newHarness(t)
	var logged bytes.Buffer
	srv := New(Deps{
		Store: base.store, Guard: base.guard, Settings: tools.DefaultSettings,
		Log:      slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Identity: base.app,
	})
	h := &harness{t: t, store: base.store, srv: httptest.NewServer(srv)}
	t.Cleanup(h.srv.Close)
	b := h.signedIn("ada", models.RoleAdmin)
	_, token := createToken(t, b, "helpdesk-bot")
	resp := b.postForm("/agents/revoke", url.Values{"name": {"helpdesk-bot"}, "confirmed": {"yes"}})
	resp.Body.Close()
	if !strings.Contains(logged.String(), "/agents") {
		t.Fatalf("the request log is empty, so the check below proves nothing:\n%s", logged.String())
	}
	if strings.Contains(logged.String(), token) || strings.Contains(logged.String(), strings.TrimPrefix(token, tools.TokenPrefix)) {
		t.Fatal("the token is in the log")
	}
}
