package tools

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

func TestObjectOfKeepsEveryFieldAsDecoded(t *testing.T) {
	in := map[string]json.RawMessage{
		"url":          json.RawMessage(`"https://example.com/?q=\"a\""`),
		"start":        json.RawMessage(`12`),
		"quote\"key":   json.RawMessage(`{"nested":[1,2]}`),
		"ünïcode\nkey": json.RawMessage(`null`),
		"empty":        nil,
	}
	var out map[string]any
	if err := json.Unmarshal(objectOf(in), &out); err != nil {
		t.Fatalf("objectOf wrote invalid JSON: %v\n%s", err, objectOf(in))
	}
	want := map[string]any{
		"url": `https://example.com/?q="a"`, "start": 12.0, "quote\"key": map[string]any{"nested": []any{1.0, 2.0}},
		"ünïcode\nkey": nil, "empty": nil,
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("objectOf round trip = %#v, want %#v", out, want)
	}
	if got := string(objectOf(nil)); got != "{}" {
		t.Errorf("objectOf(nil) = %s, want {}", got)
	}
}

// The API's check of a tool name agrees with its list, integration tools
// included, and a one-tool API serves that tool alone.
func TestToolAPIServesExactlyTheToolsItNames(t *testing.T) {
	e := newIntegrationEnv(t)
	svc := newEchoService(t)
	e.x.Set([]Integration{echoIntegration(svc)})
	api := Builtin(Deps{Guard: e.guard, Settings: DefaultSettings, Integrations: e.x}).API(nil)
	names := api.Names()
	if !slices.Contains(names, "lookup_order") || !slices.Contains(names, FetchURLName) {
		t.Fatalf("Names() = %v, want the integration's tool and fetch_url", names)
	}
	for _, name := range names {
		if !api.Serves(name) {
			t.Errorf("Serves(%q) = false for a tool Names lists", name)
		}
	}
	for _, name := range []string{"nope", "", "lookup_orde", "FETCH_URL"} {
		if api.Serves(name) {
			t.Errorf("Serves(%q) = true for a tool Names does not list", name)
		}
	}
	one := Builtin(Deps{Guard: e.guard, Settings: DefaultSettings, Integrations: e.x}).ToolAPI("lookup_order", nil)
	if !one.Serves("lookup_order") || one.Serves(FetchURLName) {
		t.Errorf("a one-tool API serves %v", []bool{one.Serves("lookup_order"), one.Serves(FetchURLName)})
	}
}
