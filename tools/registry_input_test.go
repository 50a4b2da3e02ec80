package tools

import (
	"encoding/json"
	"reflect"
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
