package guard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

func TestCookieIsDroppedHoweverItIsSpelled(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("a.example.com", []string{"93.184.216.34"}))
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("Cookie") + "|" + r.UserAgent() }))
	defer srv.Close()
	g.dialer.Route("93.184.216.34:80", srv.Listener.Addr().String())
	resp, err := g.Do(context.Background(), Request{URL: "http://a.example.com/", Header: http.Header{"cookie": {"s=1"}, "user-agent": {"curl/8"}}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := <-got; v != "|"+DefaultUserAgent {
		t.Fatalf("the server saw cookie|agent %q", v)
	}
}

func TestFixesAreEntriesThatWork(t *testing.T) {
	r := newResolver("printer.example.com", []string{"169.254.10.10"})
	p := mustPolicy(t, DefaultSettings())
	d := p.Decide(context.Background(), r, "http://printer.example.com/")
	if d.Allowed || !strings.Contains(d.Fix, "A host name never reaches a link-local address") || !strings.Contains(d.Fix, "169.254.10.10") {
		t.Fatalf("link-local by name: %q", d.Fix)
	}
	d = p.Decide(context.Background(), r, "http://[::ffff:127.0.0.1]:8080/")
	if d.Allowed || !strings.Contains(d.Fix, "add 127.0.0.1:8080 as a literal entry") {
		t.Fatalf("a mapped address must be suggested in IPv4 form: %q", d.Fix)
	}
	if _, err := ParseEntry("127.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
}

func TestEntryLengthAndRangeMessages(t *testing.T) {
	// 255 characters: past the 253 a name may have, but under the early
	// check on the whole entry's length.
	long := strings.Repeat("a", 62) + "." + strings.Repeat("b", 62) + "." + strings.Repeat("c", 62) + "." + strings.Repeat("d", 62) + ".abc"
	tests := []struct{ in, problem string }{
		{long, "characters long, over the 253"},
		{long + ":8080", "characters long, over the 253"},
		{"10.0.0.0/8", "is an address range"},
		{"[fd00::/8]", "is an address range"},
	}
	for _, tt := range tests {
		_, err := ParseEntry(tt.in)
		ee, ok := err.(*EntryError)
		if !ok || !strings.Contains(ee.Problem, tt.problem) {
			t.Errorf("ParseEntry(%d chars %.20q…) = %v, want %q", len(tt.in), tt.in, err, tt.problem)
		}
	}
}

// TestEnvironmentProxiesAreIgnored: a proxy set in the environment would
// carry every request out of the guard's sight; it is never used.
func TestEnvironmentProxiesAreIgnored(t *testing.T) {
	var hit atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	g := newTestGuard(t, nil, newResolver("a.example.com", []string{"93.184.216.34"}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	g.dialer.Route("93.184.216.34:80", srv.Listener.Addr().String())
	resp, err := g.Get(context.Background(), "http://a.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hit.Load() || !slices.Equal(g.dialer.Dials(), []string{"93.184.216.34:80"}) {
		t.Fatalf("the environment proxy was used (hit %v, dials %v)", hit.Load(), g.dialer.Dials())
	}
}

// TestPrecheckMakesEveryCheckButTheLookup: what Decide refuses without DNS,
// Precheck refuses the same way; a name is left to the full decision, and
// nothing is resolved.
func TestPrecheckMakesEveryCheckButTheLookup(t *testing.T) {
	r := &rawResolver{}
	p := mustPolicy(t, DefaultSettings(), "status.example.com", "10.0.0.7")
	for _, raw := range []string{"ftp://status.example.com/", "http://localhost/", "http://169.254.169.254/", "http://2130706433/",
		"http://other.example.com/", "http://status.example.com:8080/", "http://10.0.0.8/"} {
		pre, full := p.Precheck(raw), p.Decide(context.Background(), r, raw)
		if pre.Allowed || pre.Code != full.Code || pre.Reason != full.Reason || pre.Message != full.Message {
			t.Errorf("%s: precheck %s/%s, decide %s/%s", raw, pre.Code, pre.Reason, full.Code, full.Reason)
		}
	}
	if d := p.Precheck("http://10.0.0.7/x"); !d.Allowed || len(d.Addresses()) != 1 {
		t.Fatalf("a listed literal address is fully decided by a precheck: %+v", d)
	}
	d := p.Precheck("HTTP://Status.Example.com./a")
	if !d.Allowed || d.URL.String() != "http://status.example.com/a" || len(d.Addresses()) != 0 {
		t.Fatalf("a listed name: %+v", d)
	}
	if len(r.names) != 0 {
		t.Fatalf("Precheck looked up %v", r.names)
	}
}
