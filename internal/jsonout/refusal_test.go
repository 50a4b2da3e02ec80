package jsonout

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/jsonout/jsontest"
)

// Every field of a refusal, set alone and all together, is written as
// encoding/json writes it, and left out where encoding/json leaves it out.
func TestAppendRefusalWritesWhatEncodingJSONWrites(t *testing.T) {
	check := func(what string, r *guard.Refusal) {
		t.Helper()
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		jsontest.ReadsAlike(t, what, AppendRefusal(nil, r), want)
	}
	check("nil", nil)
	check("zero", &guard.Refusal{})
	check("empty lists", &guard.Refusal{Addresses: []netip.Addr{}, Redirects: []string{}})
	rt := reflect.TypeFor[guard.Refusal]()
	for i := range rt.NumField() {
		r := &guard.Refusal{}
		jsontest.Fill(t, rt.Field(i).Name, reflect.ValueOf(r).Elem().Field(i))
		check(rt.Field(i).Name+" alone", r)
	}
	all := &guard.Refusal{}
	jsontest.Fill(t, "all", reflect.ValueOf(all).Elem())
	check("every field", all)
	for _, m := range []guard.Remedy{guard.AddEntry("10.0.0.1"), guard.AddInternal("db.internal:5432"), guard.ChangeSetting("max_bytes")} {
		check("remedy "+string(m.Kind), &guard.Refusal{Code: guard.CodeForbidden, Remedy: m})
	}
}

// The refusal an agent reads most, an internal address, comes out byte
// for byte as encoding/json (with SetEscapeHTML(false)) wrote it.
func TestAppendRefusalOfAnInternalAddressIsByteForByte(t *testing.T) {
	r := &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalAddress,
		Message: "10.0.0.1 is in the private-use range 10.0.0.0/8, which is refused.", Fix: "Ask an admin <only> if the task needs it & more.",
		URL: "http://10.0.0.1/page/1?a=b&c=<d>", Host: "10.0.0.1", Port: 80, Addresses: []netip.Addr{netip.MustParseAddr("10.0.0.1")},
		Range: "private-use range 10.0.0.0/8", Remedy: guard.AddInternal("10.0.0.1")}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	if got := string(AppendRefusal(nil, r)) + "\n"; got != want.String() {
		t.Fatalf("\n got %s\nwant %s", got, want.String())
	}
}

// FuzzAppendRefusalReadsAsEncodingJSON writes refusals of any text, any
// port and any address, and checks a parser reads them as it reads
// encoding/json's.
func FuzzAppendRefusalReadsAsEncodingJSON(f *testing.F) {
	f.Add("10.0.0.1 is refused.", "Ask an admin.", "http://10.0.0.1/", uint16(80), "10.0.0.1", "entry")
	f.Add("\x00\b\f\u2029\"\\", "\xed\xa0\x80", "", uint16(0), "fe80::1%weird\"zone", "")
	f.Fuzz(func(t *testing.T, message, fix, url string, port uint16, addr, entry string) {
		r := &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.Reason(entry), Message: message, Fix: fix, URL: url, Host: url,
			Port: port, Entry: entry, Redirects: []string{fix, url}, Range: message, Remedy: guard.AddEntry(entry)}
		if a, err := netip.ParseAddr(addr); err == nil {
			r.Addresses = []netip.Addr{a, a}
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		jsontest.ReadsAlike(t, "refusal", AppendRefusal(nil, r), want)
	})
}

// FuzzAppendStringReadsAsEncodingJSON: any text, valid UTF-8 or not,
// reads back as the string encoding/json's output reads back as.
func FuzzAppendStringReadsAsEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\/", "\x00\x1f\x7f", "\b\f\n\r\t", "\u2028\u2029", "\xff", "caf\u00e9", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		jsontest.ReadsAlike(t, "string", AppendString(nil, s), want)
		jsontest.ReadsAlike(t, "strings", AppendStrings(nil, []string{s, s}), mustMarshal(t, []string{s, s}))
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
