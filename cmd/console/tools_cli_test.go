package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
)

// loopbackPage serves a small page on 127.0.0.1. A literal allowlist entry
// for its address:port is the only way the guard lets anything reach it.
func loopbackPage(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchCommandPrintsWhatTheAgentReads(t *testing.T) {
	db := existingDB(t)
	srv := loopbackPage(t, `<title>Status</title><h1>Partial outage — API</h1><ul><li>Errors on /v1</li><li>Fix deployed</li></ul>`)
	r := runCLI(t, "fetch", "--db", db, srv.URL+"/")
	host := strings.TrimPrefix(srv.URL, "http://")
	// stdout is the agent's text: internal, ask an admin, no entry. The
	// admin running the command reads the exact entry on stderr.
	if r.code != 3 || !strings.Contains(r.stdout, "fetch_url was refused: forbidden (internal_address)") || !strings.Contains(r.stdout, "Fix: "+guard.AgentInternalFix) ||
		strings.Contains(r.stdout, "literal entry") || strings.Contains(r.stdout, "allow add") {
		t.Fatalf("loopback without an entry, the agent's text: %+v", r)
	}
	if !strings.Contains(r.stderr, "as an internal host") || !strings.Contains(r.stderr, "console allow add --internal "+host+"\n") {
		t.Fatalf("loopback without an entry, the admin's fix on stderr: %+v", r)
	}
	if r := runCLI(t, "allow", "add", "--db", db, host); r.code != 0 {
		t.Fatalf("allow add %s: %+v", host, r)
	}
	r = runCLI(t, "fetch", "--db", db, srv.URL+"/")
	want := "URL: " + srv.URL + "/\nTitle: Status\nCharacters 0 to "
	if r.code != 0 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "# Partial outage — API\n\n- Errors on /v1\n- Fix deployed") {
		t.Fatalf("fetch: %+v", r)
	}
	r = runCLI(t, "fetch", "--json", "--db", db, srv.URL+"/")
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out["ok"] != true || out["title"] != "Status" {
		t.Fatalf("fetch --json: %v %+v", err, r)
	}
	if r := runCLI(t, "fetch", "--start", "-4", "--db", db, srv.URL); r.code != 2 || !strings.Contains(r.stderr, "--start -4 is negative") {
		t.Fatalf("negative start: %+v", r)
	}
}

func TestTokenCommands(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "token", "create", "--db", db, "helpdesk-bot")
	token := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(token, tools.TokenPrefix) || len(token) < 40 || !strings.Contains(r.stderr, "shown only now") {
		t.Fatalf("token create: %+v", r)
	}
	if r := runCLI(t, "token", "create", "--db", db, "helpdesk-bot"); r.code != 2 || !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("duplicate name: %+v", r)
	}
	if r := runCLI(t, "token", "create", "--db", db, "bad name!"); r.code != 2 || !strings.Contains(r.stderr, "is not a token name") {
		t.Fatalf("bad name: %+v", r)
	}
	a, err := app.Open(context.Background(), db, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agents := a
	if name, err := agents.VerifyToken(context.Background(), token); err != nil || name != "helpdesk-bot" {
		t.Fatalf("VerifyToken: %q %v", name, err)
	}
	if _, err := agents.VerifyToken(context.Background(), token+"x"); err == nil {
		t.Fatal("a wrong token verified")
	}
	a.Close()
	if r := runCLI(t, "token", "list", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "helpdesk-bot") || strings.Contains(r.stdout, token) {
		t.Fatalf("token list must name tokens and never show them: %+v", r)
	}
	if r := runCLI(t, "token", "revoke", "--db", db, "helpdesk-bot"); r.code != 0 {
		t.Fatalf("revoke: %+v", r)
	}
	if r := runCLI(t, "token", "revoke", "--db", db, "nobody"); r.code != 2 || !strings.Contains(r.stderr, `there is no token named "nobody"`) {
		t.Fatalf("revoke unknown: %+v", r)
	}
	a, err = app.Open(context.Background(), db, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := (a).VerifyToken(context.Background(), token); err == nil {
		t.Fatal("a revoked token verified")
	}
}

// TestMCPOverStdio runs `console mcp` as a real process: the client speaks
// to it over stdin/stdout, so anything but protocol on stdout would break
// the session.
func TestMCPOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the console binary")
	}
	bin := filepath.Join(t.TempDir(), "console")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db := existingDB(t)
	srv := loopbackPage(t, `<title>Release 4.2</title><h1>Release notes</h1><p>Fixed the login loop.</p>`)
	if r := runCLI(t, "allow", "add", "--db", db, strings.TrimPrefix(srv.URL, "http://")); r.code != 0 {
		t.Fatal(r)
	}
	cmd := exec.Command(bin, "mcp", "--db", db, "--agent", "stdio-test")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_url", Arguments: map[string]any{"url": srv.URL + "/notes"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, "Title: Release 4.2") || !strings.Contains(text, "Fixed the login loop.") {
		t.Fatalf("fetch over stdio: %q", text)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_url", Arguments: map[string]any{"url": "http://metadata.google.internal/computeMetadata/v1/"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "forbidden (metadata)") {
		t.Fatalf("refusal over stdio: %q", text)
	}
	cs.Close()
	cmd.Wait()
	assertJSONLog(t, stderr.String(), "refused")
	r := runCLI(t, "refusals", "--json", "--db", db)
	var rows []app.LoggedRefusal
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0].Agent != "stdio-test" || rows[0].Reason != "metadata" {
		t.Fatalf("the stdio refusal must reach the log on shutdown: %v %+v", err, r)
	}
}

// assertJSONLog checks that every line of a command's stderr is a JSON log
// record, as `console serve` writes them, and that one has message msg.
func assertJSONLog(t *testing.T, stderr, msg string) {
	t.Helper()
	found := false
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("stderr line is not a JSON log record: %q", line)
		}
		found = found || rec["msg"] == msg
	}
	if !found {
		t.Fatalf("no %q record in the log:\n%s", msg, stderr)
	}
}

// TestToolCommandCallsThroughTheRegistry: console tool calls any tool the
// way an agent does: schema-checked, and recorded once in the refusal log.
func TestToolCommandCallsThroughTheRegistry(t *testing.T) {
	db := existingDB(t)
	srv := loopbackPage(t, `<title>Status</title><p>ok</p>`)
	r := runCLI(t, "tool", "--db", db, "fetch_url", `{"url": "`+srv.URL+`/"}`)
	if r.code != 3 || !strings.Contains(r.stdout, "fetch_url was refused: forbidden (internal_address)") {
		t.Fatalf("a refused fetch: %+v", r)
	}
	r = runCLI(t, "tool", "--db", db, "fetch_url", `{"url": "`+srv.URL+`/", "start": -1}`)
	if r.code != 3 || !strings.Contains(r.stdout, "(bad_params)") || !strings.Contains(r.stdout, "The field start is -1; it must be 0 or more.") {
		t.Fatalf("start -1: %+v", r)
	}
	r = runCLI(t, "refusals", "--json", "--db", db)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 || rows[0]["tool"] != "fetch_url" {
		t.Fatalf("the refusal log after two refused calls: %v %s", err, r.stdout)
	}
	r = runCLI(t, "tool", "--db", db, "no_such_tool")
	if r.code != 2 || !strings.Contains(r.stderr, "there is no tool no_such_tool here; use one of: fetch_url, call_integration") {
		t.Fatalf("an unknown tool: %+v", r)
	}
	if r := runCLI(t, "tool", "--db", db, "fetch_url", `{url`); r.code != 2 || !strings.Contains(r.stderr, "is not JSON") {
		t.Fatalf("input that is not JSON: %+v", r)
	}
}
