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

// TestStringLengthCountsCharactersAsDecoded: a string value is checked
// from its bytes when it has no escapes, and decoded when it has; either
// way its length is the decoded text's characters (an invalid UTF-8 byte
// is one, as the decoder's U+FFFD), and a value of another type is named.
func TestStringLengthCountsCharactersAsDecoded(t *testing.T) {
	p := text("a field", 3)
	tests := []struct {
		raw  string
		want string // "" for accepted
	}{
		{`"abc"`, ""},
		{`"abcd"`, "The field f has 4 characters, over the limit of 3."},
		{`"ééé"`, ""},
		{`"éééé"`, "The field f has 4 characters, over the limit of 3."},
		{`"\u00e9\u00e9\u00e9"`, ""},
		{`"\u00e9\u00e9\u00e9\u00e9"`, "The field f has 4 characters, over the limit of 3."},
		{`"a\"b"`, ""},
		{`"a\"bc"`, "The field f has 4 characters, over the limit of 3."},
		{"\"\xff\xfe\xfd\"", ""},
		{"\"\xff\xfe\xfd\xfc\"", "The field f has 4 characters, over the limit of 3."},
		{`""`, ""},
		{`null`, ""},
		{`42`, "The field f must be a string, not a number."},
		{`["abc"]`, "The field f must be a string, not an array."},
	}
	for _, tt := range tests {
		// What a decoder hands checkValue: the value as it was sent.
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(`{"f":`+tt.raw+`}`), &fields); err != nil {
			t.Fatalf("%s: %v", tt.raw, err)
		}
		err := checkValue("f", p, fields["f"])
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.raw, got, tt.want)
		}
	}
}
