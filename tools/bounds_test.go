package tools

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/tools/extract"
)

func TestPageCacheExpiresAndStaysBounded(t *testing.T) {
	c := newPageCache(3, 1<<20)
	now := time.Now()
	page := func(u string, text string) *cachedPage {
		return &cachedPage{requested: u, final: u, page: extract.Page{Text: text}, runes: len(text), stored: now}
	}
	c.put(page("a", "A"))
	if _, ok := c.get("a", time.Minute, now.Add(59*time.Second)); !ok {
		t.Fatal("a fresh page was not served")
	}
	if _, ok := c.get("a", time.Minute, now.Add(61*time.Second)); ok {
		t.Fatal("an expired page was served")
	}
	if c.len() != 0 {
		t.Fatal("an expired page stayed in the cache")
	}
	for _, u := range []string{"1", "2", "3", "4"} {
		c.put(page(u, "x"))
	}
	if _, ok := c.get("1", time.Hour, now); ok || c.len() != 3 {
		t.Fatalf("the cache holds %d pages and still has the oldest; want 3 and the oldest evicted", c.len())
	}
	small := newPageCache(100, 2000)
	for i := 0; i < 10; i++ {
		small.put(page(fmt.Sprint(i), strings.Repeat("y", 600)))
	}
	if small.bytes > 2000 || small.len() != 2 {
		t.Fatalf("byte budget: %d bytes in %d pages", small.bytes, small.len())
	}
	if _, ok := small.get("9", 0, now); ok {
		t.Fatal("cache_ttl 0s must turn the cache off")
	}
}

func TestTurnBudgetMapIsBounded(t *testing.T) {
	b := newTurnBudget(100)
	for i := 0; i < 1000; i++ {
		b.admit(Turn{Thread: fmt.Sprint(i)}, "http://a/", 8)
	}
	if b.ll.Len() != 100 || len(b.byTurn) != 100 {
		t.Fatalf("the turn map holds %d turns, want 100", len(b.byTurn))
	}
}

func TestMCPTurnsByTriggerOrByBurst(t *testing.T) {
	m := newMCPTurns()
	now := time.Now()
	req := func(meta map[string]any) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta}}
	}
	t1 := m.turn(req(nil), "ada", now)
	t2 := m.turn(req(nil), "ada", now.Add(time.Minute))
	t3 := m.turn(req(nil), "ada", now.Add(time.Minute+mcpTurnGap+time.Second))
	if t1 != t2 || t2 == t3 || t1.Agent != "ada" || t1.Thread != "stdio" {
		t.Fatalf("bursts: %+v %+v %+v", t1, t2, t3)
	}
	a := m.turn(req(map[string]any{mcpTriggerMeta: "msg-7"}), "ada", now)
	b := m.turn(req(map[string]any{mcpTriggerMeta: "msg-7"}), "ada", now.Add(time.Hour))
	c := m.turn(req(map[string]any{mcpTriggerMeta: "msg-8"}), "ada", now.Add(time.Hour))
	if a != b || b == c || a.Trigger != "msg-7" {
		t.Fatalf("triggers: %+v %+v %+v", a, b, c)
	}
}

// TestReadsPerTurnOverMCP: a client sending the same trigger is one turn.
func TestReadsPerTurnOverMCP(t *testing.T) {
	e := newToolEnv(t)
	e.set(t, func(s *Settings) { s.ReadsPerTurn = 1 })
	var hits atomic.Int32
	e.serve(t, "site.example.com", "93.184.216.38", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<p>page</p>")
	}))
	server := e.reg.MCPServer("test", "local")
	cs := connectMCP(t, server, nil)
	call := func(path, trigger string) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Meta: mcp.Meta{mcpTriggerMeta: trigger}, Name: "fetch_url", Arguments: map[string]any{"url": "http://site.example.com" + path}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call("/1", "msg-1"); res.IsError {
		t.Fatal("first page refused")
	}
	if res := call("/2", "msg-1"); !res.IsError || !strings.Contains(textOf(t, res), "too_many") {
		t.Fatalf("a second page in the same turn: %q", textOf(t, res))
	}
	if res := call("/2", "msg-2"); res.IsError {
		t.Fatalf("a new trigger is a new turn: %q", textOf(t, res))
	}
	if hits.Load() != 2 {
		t.Fatalf("the site was read %d times, want 2", hits.Load())
	}
}

func TestMissingParameterFixReadsWithoutADescription(t *testing.T) {
	def := Integration{Name: "lookup_order", Method: "GET", URL: "https://shop.example.com/orders/{id}",
		Params: []IntegrationParam{{Name: "id", Type: "string", Required: true}}}
	g := guard.New(guard.Options{})
	defer g.Close()
	x := NewIntegrations(g, DefaultSettings)
	res := x.Try(context.Background(), Turn{}, def, map[string]string{})
	if res.Refusal == nil || res.Refusal.Fix != "Pass id (string)." {
		t.Fatalf("fix = %+v", res.Refusal)
	}
}

// TestAPageReadLooksTheNameUpOnce: the precheck needs no lookup, so a new
// page costs one DNS query, and reading on from the cache costs one more
// (the check that the policy still allows it).
func TestAPageReadLooksTheNameUpOnce(t *testing.T) {
	e := newToolEnv(t)
	e.set(t, func(s *Settings) { s.PageChars = 500 })
	e.serve(t, "status.example.com", "93.184.216.34", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<p>"+strings.Repeat("word ", 300)+"</p>")
	}))
	if res := e.fetcher.Fetch(context.Background(), turnA, FetchInput{URL: "http://status.example.com/"}); !res.OK() {
		t.Fatal(res.Refusal)
	}
	if n := len(e.resolver.Lookups()); n != 1 {
		t.Fatalf("a new page took %d lookups, want 1", n)
	}
	if res := e.fetcher.Fetch(context.Background(), turnA, FetchInput{URL: "http://status.example.com/", Start: 500}); !res.OK() {
		t.Fatal(res.Refusal)
	}
	if n := len(e.resolver.Lookups()); n != 2 {
		t.Fatalf("reading on took %d more lookups, want 1", n-1)
	}
}
