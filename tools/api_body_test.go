package tools

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzSplitObjectAgreesWithTheDecoder: for any body, splitObject either
// leaves it to the decoder (false) or gives exactly the fields
// json.Unmarshal gives, each value byte for byte; and it never leaves a
// single well-formed object to the decoder.
func FuzzSplitObjectAgreesWithTheDecoder(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { } `, `{"url":"https://example.com/"}`,
		" {\n\t\"url\" : \"https://example.com/?a={b}&c=[d]\" ,\r\n \"start\": 120 }\n",
		`{"url":"x","url":"y"}`,
		`{"a\"b":1,"c\\d":"e\"f\\","\u00e9":"\u00e9"}`,
		`{"nested":{"a":[1,{"b":"}]"},[]],"c":{}},"n":-1.5e3,"t":true,"f":false,"z":null}`,
		`{"s":"\\","t":"\\\""}`,
		"{\"\xff\":1}", "{\"k\":\"\xff\"}",
		`[1,2]`, `"text"`, `42`, `null`, ``, ` `, `{`, `{"a":1} {"b":2}`, `{"a":1}x`, `{"a":}`, `{"a" 1}`, `{,}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := splitObject(body)
		var want map[string]json.RawMessage
		err := json.Unmarshal(body, &want)
		isObject := err == nil && want != nil
		if !ok {
			if isObject {
				t.Fatalf("%q: a well-formed object was left to the decoder", body)
			}
			return
		}
		if !isObject {
			t.Fatalf("%q: split as an object, but the decoder says %v", body, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d fields, the decoder %d", body, len(got), len(want))
		}
		for name, v := range want {
			if !bytes.Equal(got[name], v) {
				t.Fatalf("%q: field %q is %q, the decoder %q", body, name, got[name], v)
			}
		}
	})
}
