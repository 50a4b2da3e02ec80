package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outboundhq/outbound/guard"
)

// fakeAgents knows one token.
type fakeAgents map[string]string

func (a fakeAgents) VerifyToken(_ context.Context, token string) (string, error) {
	if name, ok := a[token]; ok {
		return name, nil
	}
	return "", ErrBadToken
}

var testAgents = fakeAgents{"secret-token": "helpdesk-bot"}

func statusPageEnv(t *testing.T) *toolEnv {
	e := newToolEnv(t)
	e.serve(t, "status.example.com", "93.184.216.34", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><title>Status</title></head><body><h1>All systems operational</h1></body></html>`)
	}))
	return e
}

// connectMCP connects a client to server over the SDK's in-memory
// transport; both ends close with the test.
func connectMCP(t *testing.T, server *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callFetch(t *testing.T, cs *mcp.ClientSession, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_url", Arguments: args})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	return res
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content item, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

func TestMCPInMemoryRoundTrip(t *testing.T) {
	e := statusPageEnv(t)
	cs := connectMCP(t, e.reg.MCPServer("test", "local"), nil)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 1 {
		t.Fatalf("ListTools: %v %+v", err, tools)
	}
	tool := tools.Tools[0]
	if tool.Name != "fetch_url" || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
		t.Fatalf("fetch_url must be annotated read-only: %+v", tool)
	}
	raw, _ := json.Marshal(tool.InputSchema)
	var schema struct {
		Properties map[string]struct{ Type string } `json:"properties"`
		Required   []string                         `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties["url"].Type != "string" || schema.Properties["start"].Type != "integer" || len(schema.Required) != 1 || schema.Required[0] != "url" {
		t.Fatalf("input schema is not typed as {url: string (required), start: integer}: %s", raw)
	}

	res := callFetch(t, cs, map[string]any{"url": "http://status.example.com/"})
	if res.IsError || !strings.Contains(textOf(t, res), DataNote) || !strings.Contains(textOf(t, res), "# All systems operational") {
		t.Fatalf("fetch over MCP: %+v %q", res, textOf(t, res))
	}
	res = callFetch(t, cs, map[string]any{"url": "http://169.254.169.254/latest/meta-data/"})
	text := textOf(t, res)
	if !res.IsError || !strings.Contains(text, "fetch_url was refused: forbidden (metadata)") || !strings.Contains(text, "Fix: ") {
		t.Fatalf("refusal over MCP: %+v %q", res, text)
	}
	ev := e.Reports()
	if len(ev) != 1 || ev[0].Caller.Tool != "fetch_url" || ev[0].Caller.Agent != "local" {
		t.Fatalf("the refusal must be reported with its caller: %+v", ev)
	}
	bad, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_url", Arguments: map[string]any{"start": 3}})
	if err == nil && (!bad.IsError || !strings.Contains(textOf(t, bad), "url")) {
		t.Fatalf("a call without url passed schema validation: %+v", bad)
	}
}

func TestMCPOverHTTPNeedsATokenAndRefusesOtherOrigins(t *testing.T) {
	e := statusPageEnv(t)
	srv := httptest.NewServer(MCPHandler(e.reg.MCPServer("test", "local"), testAgents))
	defer srv.Close()

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	post := func(token, origin string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if r := post("", ""); r.StatusCode != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != `Bearer realm="outbound"` || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("no token: %d %v", r.StatusCode, r.Header)
	}
	if e := e.Reports(); len(e) != 0 {
		t.Fatalf("an unauthenticated request reached a tool: %+v", e)
	}
	if r := post("wrong", ""); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad token: %d", r.StatusCode)
	}
	if r := post("secret-token", "https://evil.example"); r.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin: %d", r.StatusCode)
	}

	transport := &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{"secret-token"}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := callFetch(t, cs, map[string]any{"url": "http://localhost:9200/_cat/indices"})
	if !res.IsError || !strings.Contains(textOf(t, res), "internal_name") {
		t.Fatalf("refusal over HTTP: %q", textOf(t, res))
	}
	ev := e.Reports()
	if len(ev) != 1 || ev[0].Caller.Agent != "helpdesk-bot" || ev[0].Caller.Thread == "" || ev[0].Caller.Thread == "stdio" {
		t.Fatalf("the token's agent and the session must be the caller: %+v", ev)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestFetchAPI(t *testing.T) {
	e := statusPageEnv(t)
	srv := httptest.NewServer(e.reg.ToolAPI(FetchURLName, testAgents))
	defer srv.Close()
	call := func(method, token, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: the answer is not JSON: %v", method, body, err)
		}
		return resp.StatusCode, out
	}
	status, out := call("POST", "secret-token", `{"url":"http://status.example.com/","thread":"T-9","trigger":"m1"}`)
	if status != 200 || out["ok"] != true || out["title"] != "Status" || !strings.Contains(out["text"].(string), "All systems operational") ||
		!strings.HasPrefix(out["answer"].(string), DataNote) || out["next_start"] != nil {
		t.Fatalf("fetch: %d %v", status, out)
	}
	status, out = call("POST", "secret-token", `{"url":"http://10.0.0.8:8080/admin","thread":"T-9","trigger":"m1"}`)
	errObj, _ := out["error"].(map[string]any)
	if status != 200 || out["ok"] != false || errObj["code"] != "forbidden" || errObj["fix"] != guard.AgentInternalFix {
		t.Fatalf("refusal is a 200 with ok:false: %d %v", status, out)
	}
	// The API's error is the guard's typed value as an agent may read it:
	// the addresses are data, not phrases in the fix, and the entry that
	// would open an internal address is not there at all.
	if _, hasRemedy := errObj["remedy"]; hasRemedy || fmt.Sprint(errObj["addresses"]) != "[10.0.0.8]" || errObj["port"] != float64(8080) {
		t.Fatalf("refusal is a 200 with ok:false: %d %v", status, out)
	}
	// curl -d sends a form content type by default; the JSON body is read all the same.
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"url":"http://status.example.com/"}`))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer secret-token")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("curl -d without a JSON content type: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	ev := e.Reports()
	if len(ev) != 1 || ev[0].Caller.Agent != "helpdesk-bot" || ev[0].Caller.Thread != "T-9" || ev[0].Refusal.URL != "http://10.0.0.8:8080/admin" ||
		ev[0].Refusal.Remedy != guard.AddInternal("10.0.0.8:8080") {
		t.Fatalf("refusal log entry (with the admin's remedy): %+v", ev)
	}
	tests := []struct {
		name, method, token, body string
		status                    int
		code                      string
	}{
		{"no token", "POST", "", `{"url":"http://status.example.com/"}`, 401, "unauthorized"},
		{"bad token", "POST", "nope", `{"url":"http://status.example.com/"}`, 401, "unauthorized"},
		{"malformed", "POST", "secret-token", `{"url":`, 400, "bad_request"},
		{"empty", "POST", "secret-token", ``, 400, "bad_request"},
		{"unknown field", "POST", "secret-token", `{"url":"http://x.example/","depth":3}`, 400, "bad_request"},
		{"wrong type", "POST", "secret-token", `{"url":42}`, 400, "bad_request"},
		{"not an object", "POST", "secret-token", `["http://x.example/"]`, 400, "bad_request"},
		{"two values", "POST", "secret-token", `{"url":"http://x.example/"} {"url":"http://y.example/"}`, 400, "bad_request"},
		{"trailing text", "POST", "secret-token", `{"url":"http://x.example/"} x`, 400, "bad_request"},
		{"no url", "POST", "secret-token", `{"start":3}`, 400, "bad_request"},
		{"wrong method", "GET", "secret-token", ``, 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := call(tt.method, tt.token, tt.body)
			e, _ := out["error"].(map[string]any)
			if status != tt.status || e["code"] != tt.code || e["message"] == "" || e["fix"] == "" {
				t.Fatalf("got %d %v, want %d %s with message and fix", status, out, tt.status, tt.code)
			}
			if msg, _ := e["message"].(string); strings.Contains(msg, "Go struct") || strings.Contains(msg, "json:") {
				t.Fatalf("the message leaks Go's wording: %q", msg)
			}
			want := map[string]string{"wrong type": "The field url must be a string, not a number.", "unknown field": `The body has an unknown field "depth".`,
				"not an object": "The body must be a JSON object, not an array.", "malformed": "The body ends in the middle of a JSON value.",
				"empty": "The body is empty.", "two values": "The body holds more than one JSON value."}[tt.name]
			if want != "" && e["message"] != want {
				t.Fatalf("message %q, want %q", e["message"], want)
			}
		})
	}
}

// TestMCPWithoutATokenSaysHowToGetOne: /mcp answers a missing or unknown
// token as the JSON API does, with a fix a person can follow.
func TestMCPWithoutATokenSaysHowToGetOne(t *testing.T) {
	e := statusPageEnv(t)
	srv := httptest.NewServer(MCPHandler(e.reg.MCPServer("test", "local"), testAgents))
	defer srv.Close()
	for token, want := range map[string]string{"": "no bearer token", "nope": "unknown or revoked"} {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error APIError }
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" ||
			!strings.Contains(body.Error.Message, want) || !strings.Contains(body.Error.Fix, "console token create") {
			t.Fatalf("token %q: %d %v %+v", token, resp.StatusCode, err, body)
		}
	}
}

// TestMCPSchemasCarryTheirBounds: a client reads start ≥ 0 and the
// screenshot's width and height ranges from the listed input schemas.
func TestMCPSchemasCarryTheirBounds(t *testing.T) {
	e := statusPageEnv(t)
	e.reg.Add(ScreenshotTool(nil))
	tools := toolsByName(t, connectMCP(t, e.reg.MCPServer("test", "local"), nil))
	type prop struct {
		Minimum, Maximum *float64
	}
	props := func(name string) map[string]prop {
		raw, _ := json.Marshal(tools[name].InputSchema)
		var s struct{ Properties map[string]prop }
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return s.Properties
	}
	if p := props("fetch_url")["start"]; p.Minimum == nil || *p.Minimum != 0 {
		t.Fatalf("start: %+v", p)
	}
	for _, side := range []string{"width", "height"} {
		if p := props("take_screenshot")[side]; p.Minimum == nil || p.Maximum == nil || *p.Minimum != shotMinSide || *p.Maximum < 1920 {
			t.Fatalf("%s: %+v", side, p)
		}
	}
	res := callMCP(t, connectMCP(t, e.reg.MCPServer("test", "local"), nil), "take_screenshot", map[string]any{"url": "https://status.example.com/", "width": -5})
	if text := textOf(t, res); !res.IsError || !strings.Contains(text, "The field width is -5; it must be from") || strings.Contains(text, "minimum") {
		t.Fatalf("a width out of range: %q", text)
	}
}
