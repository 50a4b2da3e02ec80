package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outboundhq/outbound/guard"
)

// registryEnv serves fetch_url and the integrations (one echo service
// behind lookup_order) from one registry, as console serve does.
func registryEnv(t *testing.T) (*integrationEnv, *Registry) {
	t.Helper()
	e := newIntegrationEnv(t)
	svc := newEchoService(t)
	e.reachable(svc)
	e.allow(t, svc.hostPort(), "status.example.com")
	e.serve(t, "status.example.com", "93.184.216.34", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<title>Status</title><p>All systems operational.</p>")
	}))
	e.x.Set([]Integration{echoIntegration(svc)})
	return e, Builtin(Deps{Guard: e.guard, Settings: e.Settings, Fetch: e.fetcher, Integrations: e.x})
}

func mcpNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for _, tool := range toolsByName(t, cs) {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func sortedNames(r *Registry) []string {
	return slices.Sorted(slices.Values(r.Names()))
}

// TestMCPListsExactlyTheRegistry: the MCP tool list is the registry's,
// run-time tools included, before and after the integrations change.
func TestMCPListsExactlyTheRegistry(t *testing.T) {
	e, reg := registryEnv(t)
	changed := make(chan struct{}, 16)
	cs := connectMCP(t, reg.MCPServer("test", "local"), &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	want := []string{"call_integration", "fetch_url", "lookup_order"}
	if got := mcpNames(t, cs); !slices.Equal(got, want) || !slices.Equal(sortedNames(reg), want) {
		t.Fatalf("MCP lists %v, the registry %v, want %v", got, sortedNames(reg), want)
	}
	e.x.Set(nil)
	waitChanged(t, changed)
	if got := mcpNames(t, cs); !slices.Equal(got, sortedNames(reg)) || slices.Contains(got, "lookup_order") {
		t.Fatalf("after the integrations went: MCP %v, registry %v", got, sortedNames(reg))
	}
	for _, name := range reg.Names() {
		if tool, _ := reg.Lookup(name); tool.Schema == nil || tool.Schema.Type != "object" || tool.Effect == "" || tool.Description == "" {
			t.Errorf("%s is not fully described: %+v", name, tool)
		}
	}
}

// TestBuiltinNamesAreTheBuiltinTools: the names an integration may not
// take are the tools Builtin registers, read from the same list, and each
// is refused as an integration's name with the built-in-tool problem.
func TestBuiltinNamesAreTheBuiltinTools(t *testing.T) {
	g := guard.New(guard.Options{})
	defer g.Close()
	on := func() Settings { s := DefaultSettings(); s.Browser = BrowserConfirm; return s }
	shots := NewScreenshotter(g, nil, on, nil)
	tabs := NewTabs(shots, on)
	defer tabs.Close()
	reg := Builtin(Deps{Guard: g, Settings: on, Shots: shots, Integrations: NewIntegrations(g, on), Browser: tabs})
	names := BuiltinNames()
	if got := sortedNames(reg); !slices.Equal(got, slices.Sorted(slices.Values(names))) {
		t.Fatalf("built-in tools %v, built-in names %v", got, names)
	}
	if len(names) != len(builtins)+len(browserTools) || slices.Contains(names, "") {
		t.Fatalf("built-in names %q for %d built-in tools", names, len(builtins))
	}
	for _, name := range names {
		in := Integration{Name: name, Description: "Shadows a tool.", Method: "GET", URL: "https://api.example.com/"}
		errs := in.Validate()
		if len(errs) != 1 || errs[0].Field != "name" || errs[0].Problem != "the name is taken by a built-in tool" {
			t.Errorf("an integration named %s: %v, want the built-in-tool problem alone", name, errs)
		}
	}
}

// TestOneTurnCounterPerMCPSession: one session's calls of fetch_url and
// call_integration are numbered by one counter. After a pause the session
// starts turn 2; a call of another tool family right after is in turn 2
// too, where a counter per family would still say turn 1.
func TestOneTurnCounterPerMCPSession(t *testing.T) {
	e, reg := registryEnv(t)
	var mu sync.Mutex
	now := time.Now()
	reg.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// The integration POSTs after the session read a page: the person
	// confirms, and the confirmed call is one record in the turn.
	person := &elicitingClient{action: "accept"}
	cs := connectMCP(t, reg.MCPServer("test", "local"), &mcp.ClientOptions{ElicitationHandler: person.handle})
	call := func(name string, args map[string]any) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	call("fetch_url", map[string]any{"url": "http://status.example.com/"})
	mu.Lock()
	now = now.Add(mcpTurnGap + time.Second)
	mu.Unlock()
	call("fetch_url", map[string]any{"url": "http://status.example.com/"})
	call("call_integration", map[string]any{"name": "lookup_order", "params": map[string]any{"order_id": "A-1"}})
	call("lookup_order", map[string]any{"order_id": "A-2"})
	var triggers []string
	for _, rec := range e.Records() {
		triggers = append(triggers, rec.Caller.Tool+" "+rec.Caller.Trigger)
	}
	want := []string{"fetch_url mcp-turn-1", "fetch_url mcp-turn-2", "call_integration mcp-turn-2", "call_integration mcp-turn-2"}
	if !slices.Equal(triggers, want) {
		t.Fatalf("turns %q, want %q", triggers, want)
	}
}

// TestAPIServesEveryToolAndNamesThemOn404: the registry's API serves the
// run-time tools too, and answers a name that is no tool with a JSON 404
// naming the tools, before any token check or tool runs.
func TestAPIServesEveryToolAndNamesThemOn404(t *testing.T) {
	e, reg := registryEnv(t)
	mux := http.NewServeMux()
	mux.Handle("/api/v1/tools/", reg.API(testAgents))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	post := func(path, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer secret-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s: not JSON: %v", path, err)
		}
		return resp.StatusCode, out
	}
	status, out := post("/api/v1/tools/no_such_tool", `{}`)
	errObj, _ := out["error"].(map[string]any)
	if status != 404 || errObj["code"] != "not_found" || errObj["message"] != "There is no tool no_such_tool." ||
		errObj["fix"] != "Use one of: call_integration, fetch_url, lookup_order." {
		t.Fatalf("unknown tool: %d %v", status, out)
	}
	if len(e.Records()) != 0 {
		t.Fatal("an unknown tool was recorded as a call")
	}
	status, out = post("/api/v1/tools/lookup_order", `{"order_id": "A-9", "thread": "T-2"}`)
	if status != 200 || out["ok"] != true || !strings.Contains(out["text"].(string), `"raw_path": "/orders/A-9"`) {
		t.Fatalf("an integration's own tool over the API: %d %v", status, out)
	}
	if recs := e.Records(); len(recs) != 1 || recs[0].Caller.Tool != CallIntegrationName || recs[0].Caller.Thread != "T-2" {
		t.Fatalf("records %+v", recs)
	}
}

// TestSchemaBoundsAreEnforcedOnEveryTransport: the bounds MCP clients see
// in the schema are the ones every call is held to, with a message that
// names the field and a fix; the refused call is recorded like any other.
func TestSchemaBoundsAreEnforcedOnEveryTransport(t *testing.T) {
	e := newToolEnv(t)
	shots := NewScreenshotter(e.guard, nil, e.Settings, func() (ShotBrowser, func() error, error) {
		t.Fatal("the browser was launched for input the schema refuses")
		return nil, nil, nil
	})
	e.reg.Add(ScreenshotTool(shots))

	tool, _ := e.reg.Lookup(FetchURLName)
	if start := tool.Schema.Properties["start"]; start.Minimum == nil || *start.Minimum != 0 || *tool.Schema.Properties["url"].MaxLength != maxURLLength {
		t.Fatalf("fetch_url's schema has no bounds: %+v", tool.Schema.Properties)
	}
	long := "http://status.example.com/" + strings.Repeat("a", maxURLLength)
	tests := []struct {
		tool, args, want string
	}{
		{FetchURLName, `{"url": "http://status.example.com/", "start": -1}`, "The field start is -1; it must be 0 or more."},
		{FetchURLName, `{"url": "http://status.example.com/", "start": 1.5}`, "The field start must be a whole number, not a number."},
		{FetchURLName, `{"url": "` + long + `"}`, fmt.Sprintf("The field url has %d characters, over the limit of %d.", len(long), maxURLLength)},
		{FetchURLName, `{"start": 3}`, "The input has no url."},
		{TakeScreenshotName, `{"url": "http://status.example.com/", "width": 99999}`, "The field width is 99999; it must be from 100 to 3840."},
		{TakeScreenshotName, `{"url": "http://status.example.com/", "depth": 3}`, `The input has an unknown field "depth".`},
	}
	cs := connectMCP(t, e.reg.MCPServer("test", "local"), nil)
	api := httptest.NewServer(e.reg.API(testAgents))
	defer api.Close()
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.want, func(t *testing.T) {
			before := len(e.Reports())
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			text := textOf(t, res)
			if !res.IsError || !strings.Contains(text, "("+string(ReasonBadParams)+")") || !strings.Contains(text, tt.want) || !strings.Contains(text, "Fix: ") {
				t.Fatalf("over MCP:\n%s\nwant %q", text, tt.want)
			}
			req, _ := http.NewRequest("POST", api.URL+"/api/v1/tools/"+tt.tool, strings.NewReader(tt.args))
			req.Header.Set("Authorization", "Bearer secret-token")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct{ Error APIError }
			json.NewDecoder(resp.Body).Decode(&out)
			wantAPI := strings.Replace(tt.want, "The input has", "The body has", 1)
			if resp.StatusCode != 400 || out.Error.Code != "bad_request" || out.Error.Message != wantAPI || out.Error.Fix == "" {
				t.Fatalf("over the API: %d %+v, want 400 %q", resp.StatusCode, out.Error, wantAPI)
			}
			if n := len(e.Reports()) - before; n != 2 {
				t.Fatalf("%d records for two refused calls", n)
			}
		})
	}
	if d := e.dialer.Dials(); len(d) != 0 {
		t.Fatalf("a refused input was dialled: %v", d)
	}
}

// TestMCPAndAPIAnswerWithTheSameText: the same result reads the same,
// whichever transport carried the call.
func TestMCPAndAPIAnswerWithTheSameText(t *testing.T) {
	e := statusPageEnv(t)
	cs := connectMCP(t, e.reg.MCPServer("test", "local"), nil)
	api := httptest.NewServer(e.reg.API(testAgents))
	defer api.Close()
	for _, u := range []string{"http://10.0.0.8/admin", "http://status.example.com/"} {
		res := callFetch(t, cs, map[string]any{"url": u})
		req, _ := http.NewRequest("POST", api.URL+"/api/v1/tools/fetch_url", strings.NewReader(`{"url": "`+u+`"}`))
		req.Header.Set("Authorization", "Bearer secret-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out FetchResponse
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if text := textOf(t, res); text != out.Answer || text == "" {
			t.Fatalf("%s: MCP says\n%s\nthe API says\n%s", u, text, out.Answer)
		}
	}
}
