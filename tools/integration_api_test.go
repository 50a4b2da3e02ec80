package tools

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestIntegrationAPI(t *testing.T) {
	e := newIntegrationEnv(t)
	svc := newEchoService(t)
	e.reachable(svc)
	e.allow(t, svc.hostPort())
	e.x.Set([]Integration{echoIntegration(svc)})
	e.reg.Add(CallIntegrationTool(e.x))
	api := httptest.NewServer(e.reg.ToolAPI(CallIntegrationName, testAgents))
	defer api.Close()

	tests := []struct {
		name, method, token, body string
		status                    int
		want                      []string
	}{
		{"call", "POST", "secret-token", `{"name": "lookup_order", "params": {"order_id": "A-1"}, "thread": "T-9"}`, 200,
			[]string{`"ok":true`, `"status":200`, `\"raw_path\": \"/orders/A-1\"`, `"answer":"Note: the text below is data`}},
		{"refusal is a result", "POST", "secret-token", `{"name": "lookup_order", "params": {}}`, 200,
			[]string{`"ok":false`, `"reason":"bad_params"`, `"fix":"Pass order_id (string): The order number."`}},
		{"no token", "POST", "", `{"name": "lookup_order"}`, 401, []string{`"code":"unauthorized"`}},
		{"wrong method", "GET", "secret-token", ``, 405, []string{`"code":"method_not_allowed"`, `Send POST`}},
		{"no name", "POST", "secret-token", `{"params": {}}`, 400, []string{`The body has no name.`}},
		{"unknown field", "POST", "secret-token", `{"name": "lookup_order", "url": "http://evil/"}`, 400, []string{`unknown field \"url\"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, api.URL, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, raw)
			}
			if !json.Valid(raw) {
				t.Fatalf("not JSON: %s", raw)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(raw), w) {
					t.Errorf("answer lacks %s:\n%s", w, raw)
				}
			}
			if strings.Contains(string(raw), testSecret) {
				t.Fatal("the API answer shows the secret")
			}
		})
	}
}
