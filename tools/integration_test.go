package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// orderIntegration is a valid definition the tests vary.
func orderIntegration() Integration {
	return Integration{
		Name: "lookup_order", Description: "Look up an order by its number.", Method: "GET",
		URL:    "https://api.example.com/orders/{order_id}?expand={expand}",
		Params: []IntegrationParam{{Name: "order_id", Type: ParamString, Required: true, Description: "The order number."}, {Name: "expand", Type: ParamString}},
	}
}

func TestIntegrationValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Integration)
		field  string // "" means valid
		want   string // part of the problem or fix
	}{
		{"valid", func(*Integration) {}, "", ""},
		{"empty name", func(in *Integration) { in.Name = "" }, "name", "the name is empty"},
		{"uppercase name", func(in *Integration) { in.Name = "LookupOrder" }, "name", "lowercase letter"},
		{"one letter name", func(in *Integration) { in.Name = "x" }, "name", "2 to 41 characters"},
		{"built-in name", func(in *Integration) { in.Name = "fetch_url" }, "name", "built-in tool"},
		{"call_integration is reserved", func(in *Integration) { in.Name = "call_integration" }, "name", "built-in tool"},
		{"no description", func(in *Integration) { in.Description = "  " }, "description", "tell the agent"},
		{"unknown method", func(in *Integration) { in.Method = "TRACE" }, "method", "GET, POST, PUT, PATCH, DELETE"},
		{"not http", func(in *Integration) { in.URL = "ftp://api.example.com/{order_id}{expand}" }, "url", "must start with https:// or http://"},
		{"no scheme", func(in *Integration) { in.URL = "api.example.com/{order_id}{expand}" }, "url", "must start with https://"},
		{"placeholder in host", func(in *Integration) { in.URL = "https://{order_id}.example.com/{expand}" }, "url", "placeholder sits in the host or port"},
		{"placeholder in port", func(in *Integration) { in.URL = "https://api.example.com:{order_id}/{expand}" }, "url", "host or port"},
		{"placeholder as whole authority", func(in *Integration) { in.URL = "https://{order_id}/{expand}" }, "url", "host or port"},
		{"unknown placeholder", func(in *Integration) { in.URL = "https://api.example.com/{order}/{order_id}{expand}" }, "url", "{order} names no parameter"},
		{"lone brace", func(in *Integration) { in.URL = "https://api.example.com/{order_id}/{X}{expand}" }, "url", "does not open a {parameter}"},
		{"closing brace", func(in *Integration) { in.URL = "https://api.example.com/{order_id}}{expand}" }, "url", "closes no placeholder"},
		{"fragment", func(in *Integration) { in.URL = "https://api.example.com/{order_id}?e={expand}#top" }, "url", "#fragment"},
		{"credentials", func(in *Integration) { in.URL = "https://bot:pw@api.example.com/{order_id}{expand}" }, "url", "secret header"},
		{"whitespace", func(in *Integration) { in.URL = "https://api.example.com/ {order_id}{expand}" }, "url", "whitespace"},
		{"no host", func(in *Integration) { in.URL = "https:///{order_id}{expand}" }, "url", "no host"},
		{"unused parameter", func(in *Integration) { in.URL = "https://api.example.com/orders/{order_id}" }, "params", "expand is not used"},
		{"duplicate parameter", func(in *Integration) {
			in.Params = append(in.Params, IntegrationParam{Name: "expand", Type: ParamString})
		}, "params", "defined twice"},
		{"bad parameter type", func(in *Integration) { in.Params[1].Type = "date" }, "params", "unknown type"},
		{"bad parameter name", func(in *Integration) {
			in.Params = append(in.Params, IntegrationParam{Name: "Order-Id", Type: ParamString})
		}, "params", "lowercase letter"},
		{"body with GET", func(in *Integration) { in.Body = `{"a": 1}` }, "body", "GET request has no body"},
		{"body not JSON", func(in *Integration) { in.Method = "POST"; in.Body = `{"note": {expand}` }, "body", "not valid JSON"},
		{"body placeholder unknown", func(in *Integration) { in.Method = "POST"; in.Body = `{"note": {nope}}` }, "body", "{nope} names no parameter"},
		{"valid body", func(in *Integration) {
			in.Method = "POST"
			in.URL = "https://api.example.com/orders/{order_id}"
			in.Body = `{"expand": {expand}, "note": "Ticket {order_id}"}`
		}, "", ""},
		{"host header", func(in *Integration) { in.Headers = []IntegrationHeader{{Name: "Host", Value: "evil.example"}} }, "headers", "set by Outbound itself"},
		{"credential in a plain header", func(in *Integration) {
			in.Headers = []IntegrationHeader{{Name: "Authorization", Value: "Bearer abc"}}
		}, "headers", "looks like a credential"},
		{"api key in a plain header", func(in *Integration) { in.Headers = []IntegrationHeader{{Name: "X-Api-Key", Value: "k"}} }, "headers", "Secret headers"},
		{"bad header name", func(in *Integration) { in.Headers = []IntegrationHeader{{Name: "X Token", Value: "a"}} }, "headers", "not a valid header name"},
		{"header line break", func(in *Integration) { in.Headers = []IntegrationHeader{{Name: "X-Token", Value: "a\r\nHost: evil"}} }, "headers", "line break"},
		{"empty secret", func(in *Integration) {
			in.Headers = []IntegrationHeader{{Name: "Authorization", Secret: true}}
		}, "headers", "has no value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := orderIntegration()
			tt.change(&in)
			errs := in.Validate()
			if tt.field == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			for _, e := range errs {
				if e.Field == tt.field {
					if !strings.Contains(e.Problem+"; "+e.Fix, tt.want) {
						t.Fatalf("%s error %q does not say %q", tt.field, e.Error(), tt.want)
					}
					if e.Fix == "" {
						t.Fatalf("%s error %q names no fix", tt.field, e.Error())
					}
					return
				}
			}
			t.Fatalf("want a %s error saying %q, got %v", tt.field, tt.want, errs)
		})
	}
}

func TestFillURLEscapesValues(t *testing.T) {
	tmpl := "https://api.example.com:8443/orders/{id}/items?q={q}&n={n}"
	tests := []struct {
		name, id, q string
		want        string
	}{
		{"plain", "A-1", "blue shoes", "https://api.example.com:8443/orders/A-1/items?q=blue+shoes&n=3"},
		{"dot segments", "../../admin", "x", "https://api.example.com:8443/orders/..%2F..%2Fadmin/items?q=x&n=3"},
		{"only dots", "..", "x", "https://api.example.com:8443/orders/%2E%2E/items?q=x&n=3"},
		{"userinfo", "@evil.example", "x", "https://api.example.com:8443/orders/@evil.example/items?q=x&n=3"},
		{"encoded slash", "%2F..", "x", "https://api.example.com:8443/orders/%252F../items?q=x&n=3"},
		{"absolute URL", "http://x", "x", "https://api.example.com:8443/orders/http:%2F%2Fx/items?q=x&n=3"},
		{"query injection", "1", "a&admin=true#frag", "https://api.example.com:8443/orders/1/items?q=a%26admin%3Dtrue%23frag&n=3"},
		{"query in path", "1?admin=true", "x", "https://api.example.com:8443/orders/1%3Fadmin=true/items?q=x&n=3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fillURL(tmpl, map[string]paramValue{"id": {text: tt.id}, "q": {text: tt.q}, "n": {text: "3"}})
			if got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestFillBodyKeepsValuesInTheirStrings(t *testing.T) {
	in := Integration{Name: "note_order", Method: "POST", Description: "d", URL: "https://api.example.com/notes",
		Body: `{"order": {order_id}, "count": {count}, "urgent": {urgent}, "note": "Ticket {order_id}: {text}", "extra": {text}}`,
		Params: []IntegrationParam{{Name: "order_id", Type: ParamString, Required: true}, {Name: "count", Type: ParamInteger},
			{Name: "urgent", Type: ParamBoolean}, {Name: "text", Type: ParamString}}}
	if errs := in.Validate(); len(errs) != 0 {
		t.Fatalf("definition: %v", errs)
	}
	tests := []struct {
		name   string
		params string
		want   map[string]any
	}{
		{"typed values", `{"order_id": "A-1", "count": 3, "urgent": true, "text": "hi"}`,
			map[string]any{"order": "A-1", "count": 3.0, "urgent": true, "note": "Ticket A-1: hi", "extra": "hi"}},
		{"quote cannot break out", `{"order_id": "A\", \"admin\": true, \"x\": \"", "text": "\"}, \"admin\": true}"}`,
			map[string]any{"order": `A", "admin": true, "x": "`, "count": nil, "urgent": nil, "note": `Ticket A", "admin": true, "x": ": "}, "admin": true}`, "extra": `"}, "admin": true}`}},
		{"html and unicode kept", `{"order_id": "<b>&é</b>\n"}`,
			map[string]any{"order": "<b>&é</b>\n", "count": nil, "urgent": nil, "note": "Ticket <b>&é</b>\n: ", "extra": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.params), &raw); err != nil {
				t.Fatal(err)
			}
			vals, err := in.ParamsFromJSON(raw)
			if err != nil {
				t.Fatal(err)
			}
			body := fillBody(in.Body, vals)
			var got map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("body is not JSON: %v\n%s", err, body)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("body has keys %v, want %v (a value added a key)", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %#v, want %#v", k, got[k], v)
				}
			}
		})
	}
}

func TestParamsAreChecked(t *testing.T) {
	in := Integration{Name: "count_items", Params: []IntegrationParam{
		{Name: "id", Type: ParamString, Required: true, Description: "The id."}, {Name: "n", Type: ParamInteger},
		{Name: "ratio", Type: ParamNumber}, {Name: "flag", Type: ParamBoolean}}}
	tests := []struct {
		name, params, want string
	}{
		{"missing required", `{"n": 1}`, "required parameter id is missing"},
		{"null required", `{"id": null}`, "required parameter id is missing"},
		{"unknown", `{"id": "a", "admin": true}`, "has no parameter admin"},
		{"string as number", `{"id": 5}`, "id must be a string"},
		{"fraction as integer", `{"id": "a", "n": 1.5}`, "n must be a whole number"},
		{"string as integer", `{"id": "a", "n": "1"}`, "n must be a whole number"},
		{"text as number", `{"id": "a", "ratio": "x"}`, "ratio must be a number"},
		{"string as boolean", `{"id": "a", "flag": "yes"}`, "flag must be true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.params), &raw); err != nil {
				t.Fatal(err)
			}
			_, err := in.ParamsFromJSON(raw)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error saying %q", err, tt.want)
			}
		})
	}
	t.Run("text form", func(t *testing.T) {
		vals, err := in.ParamsFromText(map[string]string{"id": `a "b"`, "n": " 7 ", "ratio": "0.25", "flag": "false"})
		if err != nil {
			t.Fatal(err)
		}
		if string(vals["id"].json) != `"a \"b\""` || vals["n"].text != "7" || vals["ratio"].text != "0.25" || string(vals["flag"].json) != "false" {
			t.Fatalf("got %+v", vals)
		}
		if _, err := in.ParamsFromText(map[string]string{"id": "a", "n": "seven"}); err == nil {
			t.Fatal("seven passed as an integer")
		}
	})
}
