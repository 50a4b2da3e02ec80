package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/outboundhq/outbound/guard"
)

// testSecret is the secret header value that must never show.
const testSecret = "sk_live_TOPSECRET_4242"

// echoService is a loopback service that answers with what it received.
type echoService struct {
	srv  *httptest.Server
	addr string
	mu   sync.Mutex
	hits []echoed
}

type echoed struct {
	Method  string `json:"method"`
	Host    string `json:"host"`
	RawPath string `json:"raw_path"`
	Query   string `json:"query"`
	Auth    string `json:"auth"`
	Body    string `json:"body"`
}

func newEchoService(t *testing.T) *echoService {
	t.Helper()
	e := &echoService{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got := echoed{Method: r.Method, Host: r.Host, RawPath: r.URL.EscapedPath(), Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: string(body)}
		e.mu.Lock()
		e.hits = append(e.hits, got)
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		// The answer leaves the secret out: an echo of it would be the
		// service's choice, not a leak by Outbound.
		got.Auth = strings.ReplaceAll(got.Auth, testSecret, "(seen)")
		_ = json.NewEncoder(w).Encode(got)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *echoService) Hits() []echoed {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]echoed(nil), e.hits...)
}

func (e *echoService) hostPort() string { return strings.TrimPrefix(e.srv.URL, "http://") }

// reachable lets the test dialer connect to svc, which is on loopback.
func (e *integrationEnv) reachable(svcs ...*echoService) {
	for _, svc := range svcs {
		e.dialer.Route(svc.hostPort(), svc.hostPort())
	}
}

// integrationEnv is a toolEnv with Integrations over its guard.
type integrationEnv struct {
	*toolEnv
	x *Integrations
}

func newIntegrationEnv(t *testing.T) *integrationEnv {
	t.Helper()
	e := &integrationEnv{toolEnv: newToolEnv(t)}
	e.x = NewIntegrations(e.guard, e.Settings)
	return e
}

// allow sets the allowlist, as a reload after "Allow this host" does.
func (e *integrationEnv) allow(t *testing.T, entries ...string) {
	t.Helper()
	e.set(t, func(*Settings) {}, entries...)
}

// echoIntegration calls svc with a path and query parameter and a secret.
func echoIntegration(svc *echoService) Integration {
	return Integration{
		Name: "lookup_order", Description: "Look up an order by its number.", Method: "POST",
		URL:     "http://" + svc.hostPort() + "/orders/{order_id}?q={q}",
		Headers: []IntegrationHeader{{Name: "Authorization", Value: "Bearer " + testSecret, Secret: true}},
		Body:    `{"note": "for {order_id}", "urgent": {urgent}}`,
		Params: []IntegrationParam{{Name: "order_id", Type: ParamString, Required: true, Description: "The order number."},
			{Name: "q", Type: ParamString}, {Name: "urgent", Type: ParamBoolean}},
	}
}

func rawParams(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIntegrationCallStaysOnItsHost(t *testing.T) {
	e := newIntegrationEnv(t)
	svc := newEchoService(t)
	e.reachable(svc)
	e.allow(t, svc.hostPort())
	e.x.Set([]Integration{echoIntegration(svc)})
	tests := []struct {
		name, orderID, wantPath string
	}{
		{"plain", "A-1", "/orders/A-1"},
		{"dot segments", "../../admin", "/orders/..%2F..%2Fadmin"},
		{"userinfo", "@evil.example", "/orders/@evil.example"},
		{"encoded slash", "%2F..", "/orders/%252F.."},
		{"absolute URL", "http://x", "/orders/http:%2F%2Fx"},
		{"only dots", "..", "/orders/%2E%2E"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(svc.Hits())
			params, _ := json.Marshal(map[string]any{"order_id": tt.orderID, "q": "a&admin=1", "urgent": true})
			res := e.x.Call(freshConversation(), turnA, "lookup_order", rawParams(t, string(params)))
			if !res.OK() {
				t.Fatalf("refused: %s", res.Answer())
			}
			hits := svc.Hits()
			if len(hits) != before+1 {
				t.Fatalf("the service got %d requests, want 1", len(hits)-before)
			}
			got := hits[len(hits)-1]
			if got.Host != svc.hostPort() || got.RawPath != tt.wantPath || got.Query != "q=a%26admin%3D1" || got.Method != "POST" {
				t.Fatalf("request %+v, want host %s path %s", got, svc.hostPort(), tt.wantPath)
			}
			if got.Auth != "Bearer "+testSecret {
				t.Fatalf("the secret header did not arrive: %q", got.Auth)
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(got.Body), &body); err != nil || body["note"] != "for "+tt.orderID || body["urgent"] != true {
				t.Fatalf("body %s: %v", got.Body, err)
			}
			if strings.Contains(res.Answer(), testSecret) {
				t.Fatal("the answer shows the secret")
			}
		})
	}
}

func TestIntegrationAnswer(t *testing.T) {
	e := newIntegrationEnv(t)
	svc := newEchoService(t)
	e.reachable(svc)
	e.allow(t, svc.hostPort())
	e.x.Set([]Integration{echoIntegration(svc)})
	res := e.x.Call(freshConversation(), turnA, "lookup_order", rawParams(t, `{"order_id": "A-1"}`))
	ans := res.Answer()
	for _, want := range []string{IntegrationDataNote + "\nIntegration: lookup_order\nRequest: POST\nStatus: 200 OK", "Content-Type: application/json", "{\n  \"method\": \"POST\",\n"} {
		if !strings.Contains(ans, want) {
			t.Errorf("answer lacks %q:\n%s", want, ans)
		}
	}
	if strings.Contains(ans, DataNote) || strings.Contains(ans, "http://"+svc.hostPort()) {
		t.Errorf("the answer calls the service a web page, or shows the integration's URL:\n%s", ans)
	}

	t.Run("the tool's description names its purpose, never its URL", func(t *testing.T) {
		for _, tool := range e.x.Tools() {
			if !strings.HasPrefix(tool.Description, "Look up an order by its number.") || strings.Contains(tool.Description, svc.hostPort()) ||
				strings.Contains(tool.Description, "/orders/") {
				t.Errorf("description %q", tool.Description)
			}
		}
	})

	t.Run("long bodies are cut at page_chars with a note", func(t *testing.T) {
		e.mu.Lock()
		e.settings.PageChars = 500
		e.mu.Unlock()
		big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, strings.Repeat("word ", 1000))
		}))
		defer big.Close()
		in := Integration{Name: "big_text", Description: "d", Method: "GET", URL: big.URL + "/"}
		bigAddr := strings.TrimPrefix(big.URL, "http://")
		e.dialer.Route(bigAddr, bigAddr)
		e.allow(t, bigAddr)
		res := e.x.Try(context.Background(), turnA, in, nil)
		if !res.OK() || res.Total != 5000 || res.Shown > 500 || res.Shown < 400 {
			t.Fatalf("shown %d of %d: %s", res.Shown, res.Total, res.Answer())
		}
		if !strings.Contains(res.Answer(), "The body was cut: characters 0 to") {
			t.Fatalf("no cut note:\n%s", res.Answer())
		}
	})
	t.Run("bad parameters are refused before any request", func(t *testing.T) {
		before := len(svc.Hits())
		res := e.x.Call(freshConversation(), turnA, "lookup_order", rawParams(t, `{"order_id": 5}`))
		if res.OK() || res.Refusal.Reason != "bad_params" || !strings.Contains(res.Answer(), "order_id must be a string") {
			t.Fatalf("got %s", res.Answer())
		}
		if len(svc.Hits()) != before {
			t.Fatal("a request was sent with bad parameters")
		}
	})
	t.Run("unknown integration names the known ones", func(t *testing.T) {
		res := e.x.Call(freshConversation(), turnA, "nope", nil)
		if res.OK() || !strings.Contains(res.Refusal.Fix, "lookup_order") {
			t.Fatalf("got %s", res.Answer())
		}
	})
}

func TestIntegrationToInternalHostNeedsALiteralEntry(t *testing.T) {
	tests := []struct {
		name    string
		url     func(svc *echoService) string
		setup   func(e *integrationEnv)
		wantFix func(svc *echoService) string
		entry   func(svc *echoService) string
	}{
		{"loopback address with a port",
			func(svc *echoService) string { return "http://" + svc.hostPort() + "/orders/{order_id}" },
			func(*integrationEnv) {},
			func(svc *echoService) string {
				return "add " + svc.hostPort() + " as an internal host to the allowlist"
			},
			func(svc *echoService) string { return svc.hostPort() }},
		{"name resolving to a private address",
			func(*echoService) string { return "http://orders.example.com/orders/{order_id}" },
			func(e *integrationEnv) { e.resolver.Answer("orders.example.com", "10.20.0.7") },
			func(*echoService) string {
				return "add orders.example.com as an internal host to the allowlist"
			},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newIntegrationEnv(t)
			svc := newEchoService(t)
			e.reachable(svc)
			tt.setup(e)
			in := echoIntegration(svc)
			in.URL = tt.url(svc)
			in.Params = in.Params[:1]
			in.Body = `{"note": "for {order_id}"}`
			e.x.Set([]Integration{in})
			res := e.x.Call(freshConversation(), turnA, "lookup_order", rawParams(t, `{"order_id": "A-1"}`))
			if res.OK() {
				t.Fatalf("an internal host was reached: %s", res.Answer())
			}
			// The admin's fix (the refusal log's) names the literal entry;
			// the agent's answer only says to ask an admin.
			ans := res.Answer()
			if !strings.Contains(res.Refusal.Fix, tt.wantFix(svc)) || !strings.Contains(ans, "lookup_order was refused: forbidden") ||
				!strings.Contains(ans, "Fix: "+guard.AgentInternalFix) || strings.Contains(ans, tt.wantFix(svc)) {
				t.Fatalf("the refusal's fix %q does not name %q, or the answer does:\n%s", res.Refusal.Fix, tt.wantFix(svc), ans)
			}
			if len(svc.Hits()) != 0 {
				t.Fatal("the refused service was reached")
			}
			reps := e.Reports()
			if len(reps) != 1 || reps[0].Caller.Tool != CallIntegrationName || reps[0].Caller.Agent != turnA.Agent {
				t.Fatalf("reports %+v, want one from the integration tool", reps)
			}
			if tt.entry == nil {
				return
			}
			// Allow this host: the literal entry, through a policy swap,
			// with no new Integrations.
			e.allow(t, tt.entry(svc))
			res = e.x.Call(freshConversation(), turnA, "lookup_order", rawParams(t, `{"order_id": "A-1"}`))
			if !res.OK() || res.Status != 200 || len(svc.Hits()) != 1 {
				t.Fatalf("after the entry: %s", res.Answer())
			}
		})
	}
}

func TestIntegrationSecretsStayOutOfLogs(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newIntegrationEnv(t)
	e.guard = guard.New(guard.Options{Resolver: e.resolver, Dial: e.dialer.Dial, Recorder: guard.RecorderFunc(func(rec guard.Record) {
		if rec.Refusal != nil {
			log.Info("refused", "tool", rec.Caller.Tool, "url", rec.Refusal.URL, "message", rec.Refusal.Message, "fix", rec.Refusal.Fix)
		}
	})})
	t.Cleanup(e.guard.Close)
	e.x = NewIntegrations(e.guard, DefaultSettings)
	svc := newEchoService(t)
	in := echoIntegration(svc)
	e.x.Set([]Integration{in})
	res := e.x.Call(freshConversation(), turnA, "lookup_order", rawParams(t, `{"order_id": "A-1"}`))
	if res.OK() || logs.Len() == 0 {
		t.Fatalf("want a logged refusal, got %s / %q", res.Answer(), logs.String())
	}
	if strings.Contains(logs.String(), testSecret) || strings.Contains(res.Answer(), testSecret) {
		t.Fatalf("the secret reached the log or the answer:\n%s", logs.String())
	}
	j, _ := json.Marshal(res.JSON())
	if strings.Contains(string(j), testSecret) {
		t.Fatal("the secret reached the API answer")
	}
}
