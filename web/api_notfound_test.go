package web

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestUnknownAPIPathIsJSON404(t *testing.T) {
	served := 0
	tool := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++; io.WriteString(w, `{"ok":true}`) })
	h := newHarnessWith(t, func(d *Deps) {
		d.Tools = fakeToolAPI{Handler: tool, names: []string{"fetch_url", "take_screenshot", "call_integration"}}
	})
	const fix = "Use one of: call_integration, fetch_url, take_screenshot."
	tests := []struct {
		name, method, path, message string
	}{
		{"POST to an unknown tool", http.MethodPost, "/api/v1/tools/foo", "There is no tool foo."},
		{"GET of an unknown tool", http.MethodGet, "/api/v1/tools/foo", "There is no tool foo."},
		{"another API path", http.MethodPost, "/api/v2/things", "There is no API at /api/v2/things."},
		{"the tools folder itself", http.MethodPost, "/api/v1/tools/", "There is no API at /api/v1/tools/."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, h.srv.URL+tt.path, strings.NewReader(`{"url":"https://example.com/"}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code, Message, Fix string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if resp.StatusCode != http.StatusNotFound || body.Error.Code != "not_found" || body.Error.Message != tt.message || body.Error.Fix != fix {
				t.Errorf("got %d %+v, want 404 not_found %q %q", resp.StatusCode, body.Error, tt.message, fix)
			}
		})
	}
	if served != 0 {
		t.Errorf("a tool handler ran %d times for paths that are not its own", served)
	}

	// The real tools are still reached.
	resp, err := http.Post(h.srv.URL+"/api/v1/tools/fetch_url", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || served != 1 {
		t.Errorf("POST to a real tool: %d, served %d", resp.StatusCode, served)
	}
}

// fakeToolAPI serves names with one handler that counts its calls.
type fakeToolAPI struct {
	http.Handler
	names []string
}

func (f fakeToolAPI) Names() []string { return f.names }

func (f fakeToolAPI) Serves(name string) bool { return slices.Contains(f.names, name) }
