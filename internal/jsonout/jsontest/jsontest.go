// Package jsontest checks hand-written JSON against encoding/json's: it
// fills a value's every field and compares what a parser reads of both.
package jsontest

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"unicode/utf8"
)

// ReadsAlike fails t unless got and want are JSON that a parser reads as
// the same value (the same keys, present or absent alike, the same
// values), and got is valid UTF-8 with U+2028 and U+2029 escaped, as
// encoding/json writes them.
func ReadsAlike(t testing.TB, what string, got, want []byte) {
	t.Helper()
	// A parser reads raw invalid UTF-8 as U+FFFD and a raw U+2028 as the
	// escape: the comparison below would not see either left unescaped.
	if !utf8.Valid(got) || bytes.ContainsRune(got, '\u2028') || bytes.ContainsRune(got, '\u2029') {
		t.Fatalf("%s: invalid UTF-8, or U+2028 or U+2029 not escaped: %q", what, got)
	}
	var g, w any
	if err := decodeNumbers(got, &g); err != nil {
		t.Fatalf("%s: not JSON (%v): %s", what, err, got)
	}
	if err := decodeNumbers(want, &w); err != nil {
		t.Fatalf("%s: encoding/json's is not JSON (%v): %s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return &json.SyntaxError{}
	}
	return nil
}

// Fill sets v, a field of a type the product encodes, to a value that is
// not empty and needs escaping where text can: every field then shows up
// in the output, so one left out or misnamed fails the comparison.
func Fill(t testing.TB, name string, v reflect.Value) {
	t.Helper()
	switch {
	case v.Type() == reflect.TypeFor[netip.Addr]():
		v.Set(reflect.ValueOf(netip.MustParseAddr("fe80::1%e\"th0")))
		return
	case v.Type() == reflect.TypeFor[[]netip.Addr]():
		v.Set(reflect.ValueOf([]netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("::ffff:10.0.0.2"), netip.MustParseAddr("fe80::1%eth0")}))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("a \"quoted\" <b>&</b>\n\t\x01\x7f\u2028 caf\u00e9 \xff" + name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(-42)
	case reflect.Uint16, reflect.Uint, reflect.Uint64:
		v.SetUint(8080)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			Fill(t, name, s.Index(i))
		}
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		Fill(t, name, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(t, name+"."+v.Type().Field(i).Name, v.Field(i))
			}
		}
	default:
		t.Fatalf("field %s is a %s: teach Fill (and the hand-written encoder) this kind", name, v.Type())
	}
}
