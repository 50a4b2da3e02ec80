package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

func TestAllowAddIsIdempotent(t *testing.T) {
	db := existingDB(t)
	if r := runCLI(t, "allow", "add", "--db", db, "a.example.com"); r.code != 0 {
		t.Fatal(r)
	}
	tests := []struct {
		name       string
		args       []string
		wantOut    []string
		wantAudits int
	}{
		{"the same entry again", []string{"a.example.com"}, []string{"a.example.com is already listed; nothing to add", "1 ALLOWED"}, 1},
		{"as typed differently", []string{"A.Example.COM."}, []string{"a.example.com is already listed", "1 ALLOWED"}, 1},
		{"listed and new together", []string{"a.example.com", "b.example.com", "b.example.com"}, []string{"added b.example.com\n", "a.example.com is already listed", "2 ALLOWED"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"allow", "add", "--db", db}, tt.args...)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("got %+v, want exit 0", r)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout %q does not say %q", r.stdout, w)
				}
			}
			if strings.Count(r.stdout, "added b.example.com") > 1 {
				t.Errorf("an entry given twice was added twice: %q", r.stdout)
			}
			if got := auditActions(t, db); len(got) != tt.wantAudits {
				t.Errorf("audit %v: want %d records (none for a repeat)", got, tt.wantAudits)
			}
		})
	}
}

func TestSettingsKeysAndDurationsAsPeopleWriteThem(t *testing.T) {
	db := existingDB(t)
	tests := []struct {
		name, key, value, want string
	}{
		{"upper case key", "MAX_BYTES", "4mb", "max_bytes = 4MB\n"},
		{"mixed case key", "Cache_TTL", "600s", "cache_ttl = 10m\n"},
		{"minutes and seconds", "timeout", "90s", "timeout = 90s\n"},
		{"hours and minutes", "cache_ttl", "60m", "cache_ttl = 1h\n"},
		{"already in force", "TIMEOUT", "1m30s", "timeout is already 90s; nothing changed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "settings", "set", "--db", db, tt.key, tt.value)
			if r.code != 0 || r.stdout != tt.want {
				t.Fatalf("got %+v, want %q", r, tt.want)
			}
		})
	}
	r := runCLI(t, "settings", "list", "--json", "--db", db)
	var rows []settingJSON
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	got := map[string]settingJSON{}
	for _, s := range rows {
		got[s.Key] = s
	}
	if got["timeout"].Value != "90s" || got["cache_ttl"].Value != "1h" || got["cache_ttl"].Default != "5m" || got["max_bytes"].Value != "4MB" {
		t.Fatalf("settings list --json: %+v", got)
	}
	if r := runCLI(t, "settings", "list", "--db", db); strings.Contains(r.stdout, "m0s") || strings.Contains(r.stdout, "h0m") || !strings.Contains(r.stdout, "90s") {
		t.Fatalf("settings list prints Go durations: %s", r.stdout)
	}
	want := []string{"settings.set max_bytes", "settings.set cache_ttl", "settings.set timeout", "settings.set cache_ttl"}
	if a := auditActions(t, db); strings.Join(a, "|") != strings.Join(want, "|") {
		t.Fatalf("audit %v, want %v (keys as stored, none for a value in force)", a, want)
	}
	if r := runCLI(t, "settings", "set", "--db", db, "timeout", "10m"); r.code != 2 || !strings.Contains(r.stderr, "10m is outside 1s–5m") {
		t.Fatalf("out of range: %+v", r)
	}
}

// TestWebAndCLIAuditTheSameChangeAlike makes one change on the console's
// pages and the same change on the command line, each on its own
// database, and compares the audit records: the same action, target,
// before and after, whoever made it.
func TestWebAndCLIAuditTheSameChangeAlike(t *testing.T) {
	cliDB := existingDB(t)
	for _, args := range [][]string{
		{"allow", "add", "status.example.com", "--note", "ticket 42"},
		{"settings", "set", "Timeout", "90s"},
		{"allow", "rm", "status.example.com"},
	} {
		if r := runCLI(t, append(args, "--db", cliDB)...); r.code != 0 {
			t.Fatalf("%v: %+v", args, r)
		}
	}

	webDB := existingDB(t)
	if r := runCLIWithStdin(t, "correct horse battery\n", "user", "add", "--role", "admin", "--db", webDB, "ada"); r.code != 0 {
		t.Fatal(r)
	}
	b := signIn(t, startServe(t, webDB), "ada", "correct horse battery")
	b.post("/integrations/allowlist", url.Values{"revision": {"0"}, "entries": {"status.example.com"}, "note": {"ticket 42"}})
	b.post("/settings", url.Values{"revision": {"0"}, "timeout": {"90s"}})
	b.post("/integrations/allowlist/remove", url.Values{"revision": {"1"}, "entry": {"status.example.com"}, "confirmed": {"yes"}})

	changes := func(db string) []string {
		var out []string
		for _, a := range auditRecords(t, db) {
			if strings.HasPrefix(a.Action, "user.") {
				continue // how the web's admin came to be
			}
			out = append(out, strings.Join([]string{a.Action, a.Target, a.Before, a.After}, " | "))
		}
		return out
	}
	cli, web := changes(cliDB), changes(webDB)
	if len(cli) != 3 || strings.Join(cli, "\n") != strings.Join(web, "\n") {
		t.Fatalf("the same change is audited differently\ncommand line:\n  %s\nweb:\n  %s", strings.Join(cli, "\n  "), strings.Join(web, "\n  "))
	}
}

// auditRecords is the audit trail, oldest first.
func auditRecords(t *testing.T, db string) []models.Audit {
	t.Helper()
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, _, err := store.ListAudit(context.Background(), 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]models.Audit, len(rows))
	for i, r := range rows {
		out[len(rows)-1-i] = r
	}
	return out
}

// startServe runs `console serve` on a loopback port until the test ends
// and returns its base URL.
func startServe(t *testing.T, db string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() { done <- serve(ctx, env{strings.NewReader(""), &strings.Builder{}, &stderr}, db, l) }()
	t.Cleanup(func() { cancel(); <-done })
	base := "http://" + l.Addr().String()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never answered: %s", stderr.String())
		}
	}
}

// webClient is a signed-in browser that submits forms with the CSRF
// token of the page they are on, and expects each POST to redirect.
type webClient struct {
	t      *testing.T
	base   string
	client *http.Client
}

func signIn(t *testing.T, base, name, password string) *webClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &webClient{t: t, base: base, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	b.postFrom("/login", "/login", url.Values{"name": {name}, "password": {password}})
	return b
}

func (b *webClient) post(path string, form url.Values) { b.postFrom("/integrations", path, form) }

func (b *webClient) postFrom(page, path string, form url.Values) {
	b.t.Helper()
	resp, err := b.client.Get(b.base + page)
	if err != nil {
		b.t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.t.Fatal(err)
	}
	token, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok {
		b.t.Fatalf("%s has no CSRF token (status %d)", page, resp.StatusCode)
	}
	form.Set("_csrf", token)
	resp, err = b.client.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("POST %s: status %d, want 303", path, resp.StatusCode)
	}
}
