package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outboundhq/outbound/guard"
)

// TestEveryToolListsTheTicket: every tool, built in or an integration's,
// lists the optional ticket in its schema with the same description, and
// the tool's own schema value is left as it was.
func TestEveryToolListsTheTicket(t *testing.T) {
	_, reg := registryEnv(t)
	cs := connectMCP(t, reg.MCPServer("test", "local"), nil)
	listed := toolsByName(t, cs)
	for _, name := range reg.Names() {
		tool, ok := listed[name]
		if !ok {
			t.Fatalf("MCP does not list %s", name)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Type        string `json:"type"`
				Description string `json:"description"`
				MaxLength   int    `json:"maxLength"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		p, ok := s.Properties[TicketArg]
		if !ok || p.Type != "string" || p.Description != TicketDescription || p.MaxLength != guard.MaxTicketLen || strings.Contains(strings.Join(s.Required, ","), TicketArg) {
			t.Errorf("%s lists ticket as %+v (required %v)", name, p, s.Required)
		}
		if own, _ := reg.Lookup(name); own.Schema != nil && own.Schema.Properties[TicketArg] != nil {
			t.Errorf("listing %s changed the tool's own schema", name)
		}
	}
}

// TestTicketNamesTheCallOnEveryTransport: the ticket argument reaches the
// call's record (not the tool: an integration with no ticket parameter
// still accepts the call), over MCP, the API and a direct call; the
// X-Outbound-Ticket header does the same where the input has none.
func TestTicketNamesTheCallOnEveryTransport(t *testing.T) {
	e, reg := registryEnv(t)
	res, err := reg.Call(context.Background(), Call{Tool: "lookup_order", Turn: Turn{Agent: "bot"}, Args: json.RawMessage(`{"order_id": "A-9", "ticket": "SUP-1"}`)})
	if err != nil || !res.OK() || strings.Contains(res.Text, "SUP-1") {
		t.Fatalf("an integration called with a ticket: %v %+v", err, res)
	}

	mux := http.NewServeMux()
	mux.Handle("/api/v1/tools/", reg.API(testAgents))
	mux.Handle("/mcp", MCPHandler(reg.MCPServer("test", "local"), testAgents))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	post := func(body, header string) int {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/tools/fetch_url", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer secret-token")
		if header != "" {
			req.Header.Set(guard.TicketHeader, header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(`{"url": "http://status.example.com/", "ticket": "SUP-2", "thread": "T-2"}`, "SUP-0"); s != 200 {
		t.Fatalf("API with a ticket: %d", s)
	}
	if s := post(`{"url": "http://status.example.com/"}`, "SUP-3"); s != 200 {
		t.Fatalf("API with the header: %d", s)
	}

	transport := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: ticketBearer{"secret-token", "SUP-4"}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := callFetch(t, cs, map[string]any{"url": "http://status.example.com/"}); res.IsError {
		t.Fatalf("MCP with the header: %s", textOf(t, res))
	}
	if res := callFetch(t, cs, map[string]any{"url": "http://status.example.com/", "ticket": "SUP-5"}); res.IsError {
		t.Fatalf("MCP with a ticket argument: %s", textOf(t, res))
	}

	recs := e.Records()
	want := []string{"SUP-1", "SUP-2", "SUP-3", "SUP-4", "SUP-5"}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, rec := range recs {
		if rec.Caller.Ticket != want[i] || rec.Refusal != nil {
			t.Errorf("record %d: ticket %q, refusal %v; want %q allowed", i, rec.Caller.Ticket, rec.Refusal, want[i])
		}
	}
	if th := recs[3].Caller.Thread; !strings.HasPrefix(th, MCPThreadPrefix) || !SessionThread(th) || SessionThread("T-2") {
		t.Errorf("an MCP call's thread %q is not marked as a session", th)
	}
}

// TestMalformedTicketsAreRefusedWithAFix: a ticket that cannot be stored is
// an input error that names the problem and the fix, on the argument and
// on the header alike, and the tool does not run.
func TestMalformedTicketsAreRefusedWithAFix(t *testing.T) {
	e, reg := registryEnv(t)
	for _, c := range []Call{
		{Tool: FetchURLName, Args: json.RawMessage(`{"url": "http://status.example.com/", "ticket": "SUP 1 <b>"}`)},
		{Tool: FetchURLName, Args: json.RawMessage(`{"url": "http://status.example.com/", "ticket": 42}`)},
		{Tool: FetchURLName, Args: json.RawMessage(`{"url": "http://status.example.com/", "ticket": "` + strings.Repeat("9", guard.MaxTicketLen+1) + `"}`)},
		{Tool: FetchURLName, Turn: Turn{Ticket: "a/b"}, Args: json.RawMessage(`{"url": "http://status.example.com/"}`)},
	} {
		res, err := reg.Call(context.Background(), c)
		if err != nil || res.OK() || !res.InputError() || res.Refusal.Fix == "" || !strings.Contains(res.Refusal.Message+res.Refusal.Fix, "ticket") {
			t.Errorf("%s: %v %+v", c.Args, err, res.Refusal)
		}
	}
	// A malformed header beside bad input: the input's error is the
	// answer, and the header's ticket is still not recorded.
	if res, _ := reg.Call(context.Background(), Call{Tool: FetchURLName, Turn: Turn{Ticket: "a/b"}, Args: json.RawMessage(`{"url": 42}`)}); !res.InputError() {
		t.Errorf("bad input with a malformed ticket header: %+v", res)
	}
	if d := e.dialer.Dials(); len(d) != 0 {
		t.Fatalf("a call with a malformed ticket dialled %v", d)
	}
	for _, rec := range e.Records() {
		if rec.Caller.Ticket != "" {
			t.Errorf("a malformed ticket was recorded: %q", rec.Caller.Ticket)
		}
	}
}

type ticketBearer struct{ token, ticket string }

func (b ticketBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	r.Header.Set(guard.TicketHeader, b.ticket)
	return http.DefaultTransport.RoundTrip(r)
}
