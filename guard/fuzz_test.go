package guard

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecide checks invariants of every decision: no panic; an allowed
// decision names an http(s) URL whose every address is public or unlocked
// by a literal entry; a refusal always carries a code, a sentence and a fix.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "https://93.184.216.34:443/x", "http://[::ffff:127.0.0.1]/", "http://2130706433/",
		"http://0x7f.1/", "http://１２７.０.０.１/", "http://a@b/", "http://xn--bcher-kva.example./", "file:///etc/passwd",
		"http://[fe80::1%25en0]/", "http://metadata.google.internal/", "http://intranet.corp:8080/", "HTTP://EXAMPLE.COM:80",
		"http://example.com:0/", "//example.com", "http://%30/", "http://[::]/", "http://a.b.docs.example.com/",
	} {
		f.Add(s)
	}
	r := newResolver("example.com", []string{"93.184.216.34"}, "intranet.corp", []string{"10.1.2.3"}, "a.b.docs.example.com", []string{"10.0.0.1"})
	p := mustPolicy(f, DefaultSettings())
	listed := mustPolicy(f, DefaultSettings(), "intranet.corp:8080", "*.docs.example.com", "example.com", "10.1.2.3")
	f.Fuzz(func(t *testing.T, raw string) {
		for _, pol := range []*Policy{p, listed} {
			d := pol.Decide(context.Background(), r, raw)
			if !d.Allowed {
				if d.Code == "" || d.Reason == "" || d.Message == "" || d.Fix == "" {
					t.Fatalf("refusal without code, reason, message or fix: %+v", d)
				}
				continue
			}
			if d.URL == nil || (d.URL.Scheme != "http" && d.URL.Scheme != "https") || d.URL.User != nil {
				t.Fatalf("allowed a URL that is not plain http(s): %q", raw)
			}
			if d.Host != strings.ToLower(d.Host) || strings.HasSuffix(d.Host, ".") || !utf8.ValidString(d.Host) {
				t.Fatalf("allowed a host that is not normalised: %q", d.Host)
			}
			addrs := d.Addresses()
			if len(addrs) == 0 {
				t.Fatalf("allowed %q without an address", raw)
			}
			for _, a := range addrs {
				if c := ClassifyAddr(a); !c.Public() && !unlocks(d.Entry, c.Kind, a) {
					t.Fatalf("allowed %q at %s (%s)", raw, a, c.Range)
				}
			}
			if _, err := netip.ParseAddr(d.Host); err != nil && endsInNumber(d.Host) {
				t.Fatalf("allowed a numeric host form %q", d.Host)
			}
		}
	})
}

// FuzzParseEntry checks that a parsed entry prints in a form that parses
// back to the same entry, and that errors always say what to do.
func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{"status.example.com", "*.docs.example.com", "intranet.corp:8080", "10.1.2.3", "[fd00::5]:8443",
		"*.com", "*", "https://x/", "a b", "[::1", "bücher.example", "*.co.uk", "x:99999", "::ffff:1.2.3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEntry(s)
		if err != nil {
			ee, ok := err.(*EntryError)
			if !ok || ee.Problem == "" || ee.Fix == "" || ee.Input != s {
				t.Fatalf("ParseEntry(%q) error without problem and fix: %v", s, err)
			}
			return
		}
		again, err := ParseEntry(e.String())
		if err != nil || again != e {
			t.Fatalf("ParseEntry(%q) = %q, which parses to %q, %v", s, e, again, err)
		}
		if e.Wildcard() && e.IP().IsValid() {
			t.Fatalf("wildcard over an IP: %q", s)
		}
	})
}
