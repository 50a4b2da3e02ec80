package tools

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
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

// TestACutShortBodySaysSo: a body whose connection ends before it does
// (read all at once now, before any decoding) is still "the body ends in
// the middle of a JSON value", as the decoder said when it read it.
func TestACutShortBodySaysSo(t *testing.T) {
	e := newToolEnv(t)
	api := e.reg.API(testAgents)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/tools/fetch_url", nil)
	req.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"url":"http://status.exa`), iotest.ErrReader(io.ErrUnexpectedEOF)))
	req.Header.Set("Authorization", "Bearer secret-token")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	var out struct{ Error APIError }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	if rec.Code != http.StatusBadRequest || out.Error.Code != "bad_request" || out.Error.Message != "The body ends in the middle of a JSON value." || out.Error.Fix == "" {
		t.Fatalf("%d %+v", rec.Code, out.Error)
	}
	if n := len(e.Records()); n != 0 {
		t.Fatalf("a body that could not be read was recorded as %d calls", n)
	}
}
