package guard

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"testing"
)

// staticResolver answers every name with the same address and never
// allocates, so the benchmark measures the guard, not the stub.
type staticResolver struct{ addrs []netip.Addr }

func (r *staticResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r.addrs, nil
}

// benchPolicy builds a policy of n entries, half literal and half
// wildcard, plus the entries the benchmark URLs match.
func benchPolicy(b *testing.B, n int) *Policy {
	b.Helper()
	entries := make([]Entry, 0, n)
	for i := 0; len(entries) < n-2; i++ {
		text := fmt.Sprintf("host%d.tenant%d.example.com", i, i%97)
		if i%2 == 1 {
			text = fmt.Sprintf("*.zone%d.example.net", i)
		}
		entries = append(entries, mustEntry(b, text))
	}
	entries = append(entries, mustEntry(b, "93.184.216.34"), mustEntry(b, "*.docs.example.org"))
	p, err := NewPolicy(entries, DefaultSettings())
	if err != nil {
		b.Fatal(err)
	}
	return p
}

const (
	benchLiteralURL = "https://93.184.216.34/status/incident?id=42"
	benchNameURL    = "https://api.v2.docs.example.org/status/incident?id=42"
)

// BenchmarkURLParse is the floor: url.Parse alone on the same input.
func BenchmarkURLParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := url.Parse(benchLiteralURL); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	r := &staticResolver{addrs: []netip.Addr{netip.MustParseAddr("93.184.216.35")}} // a pointer, so the interface conversion does not allocate
	for _, n := range []int{10, 10000} {
		p := benchPolicy(b, n)
		for _, c := range []struct{ name, url string }{{"ip-literal", benchLiteralURL}, {"name", benchNameURL}} {
			b.Run(fmt.Sprintf("%s/entries=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				ctx := context.Background()
				for b.Loop() {
					if d := p.Decide(ctx, r, c.url); !d.Allowed {
						b.Fatal(d.Message)
					}
				}
			})
		}
	}
	b.Run("ip-literal/public-web", func(b *testing.B) {
		p := mustPolicy(b, DefaultSettings())
		b.ReportAllocs()
		for b.Loop() {
			if d := p.Decide(context.Background(), r, benchLiteralURL); !d.Allowed {
				b.Fatal(d.Message)
			}
		}
	})
	// The flood an ingest load test sends: a private literal, refused
	// with its message, fix and remedy written out.
	b.Run("ip-literal/private-refused", func(b *testing.B) {
		p := mustPolicy(b, DefaultSettings())
		b.ReportAllocs()
		for b.Loop() {
			if d := p.Decide(context.Background(), r, "http://10.1.2.3/page/42"); d.Allowed || d.Reason != ReasonInternalAddress {
				b.Fatalf("allowed or for another reason: %+v", d)
			}
		}
	})
}
