package guard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

// rawResolver records the exact names it is asked for.
type rawResolver struct {
	mu    sync.Mutex
	names []string
}

func (r *rawResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, host)
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

func TestNamesAreResolvedAsAbsolute(t *testing.T) {
	r := &rawResolver{}
	d := mustPolicy(t, DefaultSettings()).Decide(context.Background(), r, "http://status.example.com/")
	if !d.Allowed || !slices.Equal(r.names, []string{"status.example.com."}) {
		t.Fatalf("looked up %q; a resolver search list could rewrite a relative name", r.names)
	}
}

func TestLeadingZeroPortIsDecidedOnceAndDialledCanonically(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("status.example.com", []string{"93.184.216.34"}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	g.dialer.Route("93.184.216.34:80", srv.Listener.Addr().String())
	resp, err := g.Get(context.Background(), "http://status.example.com:0080/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if l := g.resolver.Lookups(); len(l) != 1 {
		t.Fatalf("%d lookups (%v): the dial decided again instead of using the decision", len(l), l)
	}
	if resp.URL.Host != "status.example.com:80" {
		t.Fatalf("the request went to %q", resp.URL.Host)
	}
}
