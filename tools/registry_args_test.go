package tools

import (
	"encoding/json"
	"reflect"
	"testing"
)

// argsProbe has a field of each kind setPlain sets and of kinds it leaves
// to the decoder, under the tags tools' inputs use.
type argsProbe struct {
	URL    string  `json:"url"`
	Start  int     `json:"start,omitempty"`
	Small  int8    `json:"small"`
	Tab    bool    `json:"tab,omitempty"`
	Ratio  float64 `json:"ratio"`
	Name   string
	Quoted int    `json:"quoted,string"`
	Ptr    *int   `json:"ptr"`
	hidden string // unexported: the decoder skips it, and so must decodeArgs
}

// decodeWithDecoder is what decodeArgs did before its field-by-field path:
// the decoder alone.
func decodeWithDecoder(args map[string]json.RawMessage, v any) error {
	return json.Unmarshal(objectOf(args), v)
}

// FuzzDecodeArgsAgreesWithTheDecoder checks that decodeArgs leaves every
// input struct exactly as the decoder does, and fails exactly when it
// does, for any key and any valid JSON value.
func FuzzDecodeArgsAgreesWithTheDecoder(f *testing.F) {
	for _, seed := range []struct{ key, value string }{
		{"url", `"https://example.com/a?b=c"`}, {"url", `"caf\u00e9"`}, {"url", `"\xff\xfe"`}, {"url", `"café"`},
		{"start", `12`}, {"start", `-0`}, {"start", `1e2`}, {"start", `1.5`}, {"start", `99999999999999999999`},
		{"small", `127`}, {"small", `128`}, {"tab", `true`}, {"tab", `"true"`}, {"ratio", `0.5`}, {"Name", `"n"`},
		{"name", `"n"`}, {"URL", `"https://example.com/"`}, {"quoted", `"7"`}, {"ptr", `3`}, {"hidden", `"h"`},
		{"unknown", `1`}, {"url", `null`}, {"url", ``}, {"url", ` "padded" `}, {"start", `"12"`}, {"url", `12`},
	} {
		f.Add(seed.key, seed.value, "start", "5")
	}
	f.Fuzz(func(t *testing.T, key1, value1, key2, value2 string) {
		args := map[string]json.RawMessage{}
		for _, kv := range [][2]string{{key1, value1}, {key2, value2}} {
			if kv[1] != "" && !json.Valid([]byte(kv[1])) {
				return // a value from a decoder is always valid JSON
			}
			args[kv[0]] = json.RawMessage(kv[1])
		}
		for _, newV := range []func() any{
			func() any { return &argsProbe{URL: "before", Start: 9} },
			func() any { return &FetchInput{} },
			func() any { return &ScreenshotInput{Width: 1} },
		} {
			got, want := newV(), newV()
			gotErr, wantErr := decodeArgs(args, got), decodeWithDecoder(args, want)
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("%q: decodeArgs error %v, the decoder's %v", args, gotErr, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: decodeArgs set %+v, the decoder %+v", args, got, want)
			}
		}
	})
}

// The usual input is set without the decoder; an escaped string and a key
// in another case still reach their fields through it, and a number that
// is not whole is refused as the decoder refuses it.
func TestDecodeArgsSetsPlainFieldsAndLeavesTheRestToTheDecoder(t *testing.T) {
	plain := map[string]json.RawMessage{"url": json.RawMessage(`"https://example.com/päge"`), "start": json.RawMessage(`40`)}
	var in FetchInput
	if !setPlainFields(plain, &in) || in != (FetchInput{URL: "https://example.com/päge", Start: 40}) {
		t.Fatalf("plain input: set %+v", in)
	}
	for _, args := range []map[string]json.RawMessage{
		{"url": json.RawMessage(`"https://example.com/\u00e9"`)},
		{"URL": json.RawMessage(`"https://example.com/é"`)},
	} {
		var probe FetchInput
		if setPlainFields(args, &probe) {
			t.Errorf("%q was set without the decoder", args)
		}
		var out FetchInput
		if err := decodeArgs(args, &out); err != nil || out.URL != "https://example.com/é" {
			t.Errorf("%q: decodeArgs = %+v, %v", args, out, err)
		}
	}
	for _, number := range []string{`1.5`, `0e1`} {
		var bad FetchInput
		if err := decodeArgs(map[string]json.RawMessage{"start": json.RawMessage(number)}, &bad); err == nil {
			t.Errorf("%s for an integer field was accepted", number)
		}
	}
}
