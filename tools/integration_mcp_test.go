package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectIntegrations serves e's integrations beside fetch_url over an
// in-memory transport and returns the client session and a channel that
// receives each tool-list-changed notification.
func connectIntegrations(t *testing.T, e *integrationEnv) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	reg := Builtin(Deps{Guard: e.guard, Settings: DefaultSettings, Integrations: e.x})
	server := reg.MCPServer("test", "local")
	changed := make(chan struct{}, 16)
	cs := connectMCP(t, server, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	return cs, changed
}

func toolsByName(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

func TestIntegrationToolsOverMCP(t *testing.T) {
	e := newIntegrationEnv(t)
	svc := newEchoService(t)
	e.reachable(svc)
	e.allow(t, svc.hostPort())
	e.x.Set([]Integration{echoIntegration(svc)})
	cs, changed := connectIntegrations(t, e)

	tools := toolsByName(t, cs)
	for _, name := range []string{"fetch_url", "call_integration", "lookup_order"} {
		if tools[name] == nil {
			t.Fatalf("tool %s is not listed; got %v", name, tools)
		}
	}
	t.Run("typed schema", func(t *testing.T) {
		raw, _ := json.Marshal(tools["lookup_order"].InputSchema)
		var schema struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Type        string `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
			Required             []string `json:"required"`
			AdditionalProperties any      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		p := schema.Properties
		if schema.Type != "object" || p["order_id"].Type != "string" || p["urgent"].Type != "boolean" || p["q"].Type != "string" ||
			p["order_id"].Description != "The order number." || len(schema.Required) != 1 || schema.Required[0] != "order_id" || schema.AdditionalProperties == nil {
			t.Fatalf("schema %s", raw)
		}
		if !strings.Contains(tools["lookup_order"].Description, "Look up an order by its number.") {
			t.Fatalf("description %q", tools["lookup_order"].Description)
		}
	})
	t.Run("secrets stay out of the tool list", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		if strings.Contains(string(raw), testSecret) {
			t.Fatal("the tool list shows a secret")
		}
	})
	t.Run("own tool", func(t *testing.T) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_order", Arguments: map[string]any{"order_id": "../A-1", "urgent": false}})
		if err != nil {
			t.Fatal(err)
		}
		text := textOf(t, res)
		if res.IsError || !strings.Contains(text, "Status: 200 OK") || !strings.Contains(text, `"raw_path": "/orders/..%2FA-1"`) || strings.Contains(text, testSecret) {
			t.Fatalf("answer:\n%s", text)
		}
	})
	t.Run("call_integration", func(t *testing.T) {
		// A new session: the one above has read the service's answer, and
		// would need a person to confirm this POST.
		cs, _ := connectIntegrations(t, e)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_integration", Arguments: map[string]any{"name": "lookup_order", "params": map[string]any{"order_id": "B-2"}}})
		if err != nil {
			t.Fatal(err)
		}
		if text := textOf(t, res); res.IsError || !strings.Contains(text, `"raw_path": "/orders/B-2"`) {
			t.Fatalf("answer:\n%s", text)
		}
	})
	t.Run("bad arguments are a tool error", func(t *testing.T) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_order", Arguments: map[string]any{"order_id": "A", "admin": true}})
		if err != nil {
			t.Fatal(err)
		}
		if text := textOf(t, res); !res.IsError || !strings.Contains(text, "has no parameter admin") {
			t.Fatalf("answer:\n%s", text)
		}
	})
	t.Run("the list follows Set", func(t *testing.T) {
		drain(changed)
		renamed := echoIntegration(svc)
		renamed.Name = "find_order"
		e.x.Set([]Integration{renamed})
		waitChanged(t, changed)
		tools := toolsByName(t, cs)
		if tools["lookup_order"] != nil || tools["find_order"] == nil || tools["call_integration"] == nil || tools["fetch_url"] == nil {
			t.Fatalf("after the rename: %v", tools)
		}
		// A rename removes one tool and adds another; each may notify.
		// Let every notification of that change arrive before asking
		// whether an unchanged set sends another.
		settle(changed, 200*time.Millisecond)
		e.x.Set([]Integration{renamed})
		select {
		case <-changed:
			t.Fatal("an unchanged set notified the client")
		case <-time.After(200 * time.Millisecond):
		}
	})
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// settle drains c until it has been quiet for quiet.
func settle(c chan struct{}, quiet time.Duration) {
	for {
		select {
		case <-c:
		case <-time.After(quiet):
			return
		}
	}
}

func waitChanged(t *testing.T, c chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed notification")
	}
}
