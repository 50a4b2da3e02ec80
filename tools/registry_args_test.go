package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// argsProbe has a field of each type setPlain sets, under the tags tools'
// inputs use: decodeArgs sets it without the decoder.
type argsProbe struct {
	URL    string `json:"url"`
	Start  int    `json:"start,omitempty"`
	Small  int8   `json:"small"`
	Tab    bool   `json:"tab,omitempty"`
	Name   string
	hidden string // unexported: the decoder skips it, and so must decodeArgs
}

// The structs below each have what only the decoder reads right, so
// decodeArgs leaves them to it whole.
type (
	quotedProbe struct {
		URL    string `json:"url"`
		Quoted int    `json:"quoted,string"`
	}
	lowerText   string
	methodProbe struct {
		URL   lowerText `json:"url"`
		Start int       `json:"start"`
	}
	numberProbe struct {
		Start json.Number `json:"start"`
	}
	badTagProbe struct {
		URL string `json:"u\\rl"` // a name the decoder ignores: it matches "URL" instead
	}
	otherKindsProbe struct {
		URL   string   `json:"url"`
		Ratio float64  `json:"ratio"`
		Ptr   *int     `json:"ptr"`
		Small uint8    `json:"small"`
		List  []string `json:"list"`
	}
	selfProbe struct {
		URL string `json:"url"`
	}
)

func (t *lowerText) UnmarshalText(b []byte) error {
	*t = lowerText(strings.ToLower(string(b)))
	return nil
}

func (p *selfProbe) UnmarshalJSON(b []byte) error { p.URL = "from UnmarshalJSON"; return nil }

// The fast path is for plain structs only; the fuzz test below relies on
// argsProbe, FetchInput and ScreenshotInput taking it.
func TestOnlyPlainStructsAreSetWithoutTheDecoder(t *testing.T) {
	for _, v := range []any{argsProbe{}, FetchInput{}, ScreenshotInput{}} {
		if plainFieldsOf(reflect.TypeOf(v)) == nil {
			t.Errorf("%T is not set field by field", v)
		}
	}
	for _, v := range []any{quotedProbe{}, methodProbe{}, numberProbe{}, badTagProbe{}, otherKindsProbe{}, selfProbe{}} {
		if plainFieldsOf(reflect.TypeOf(v)) != nil {
			t.Errorf("%T is set field by field, though the decoder reads it its own way", v)
		}
	}
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
		{"url", `"https://example.com/a?b=c"`}, {"url", `"caf\u00e9"`}, {"url", "\"\xff\xfe\""}, {"url", `"café"`},
		{"start", `12`}, {"start", `-0`}, {"start", `1e2`}, {"start", `1.5`}, {"start", `99999999999999999999`},
		{"small", `127`}, {"small", `128`}, {"tab", `true`}, {"tab", `"true"`}, {"ratio", `0.5`}, {"Name", `"n"`},
		{"name", `"n"`}, {"URL", `"https://example.com/"`}, {"quoted", `"7"`}, {"ptr", `3`}, {"hidden", `"h"`}, {"url", `"MiXeD"`},
		{"u\\rl", `"x"`}, {"list", `["a"]`}, {"start", `"12abc"`},
		{"unknown", `1`}, {"url", `null`}, {"url", ``}, {"url", ` "padded" `}, {"start", `"12"`}, {"url", `12`},
	} {
		f.Add(seed.key, seed.value, "start", "5")
	}
	f.Fuzz(func(t *testing.T, key1, value1, key2, value2 string) {
		if key1 != key2 && strings.EqualFold(key1, key2) {
			// Two keys for one field: the decoder keeps whichever comes
			// last in objectOf's object, whose order is the map's.
			return
		}
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
			func() any { return &quotedProbe{} },
			func() any { return &methodProbe{} },
			func() any { return &numberProbe{} },
			func() any { return &badTagProbe{} },
			func() any { return &otherKindsProbe{Ratio: 1} },
			func() any { return &selfProbe{} },
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
