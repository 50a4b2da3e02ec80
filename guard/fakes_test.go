package guard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
)

// stubResolver answers from a table and records every lookup. A name may
// have several answers in sequence (for rebinding tests): each lookup takes
// the next one, and the last one repeats.
type stubResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups []string
}

func newResolver(pairs ...any) *stubResolver {
	r := &stubResolver{answers: map[string][][]netip.Addr{}}
	for i := 0; i < len(pairs); i += 2 {
		name := pairs[i].(string)
		var addrs []netip.Addr
		for _, s := range pairs[i+1].([]string) {
			addrs = append(addrs, netip.MustParseAddr(s))
		}
		r.answers[name] = append(r.answers[name], addrs)
	}
	return r
}

var errNoSuchHost = errors.New("no such host")

func (r *stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups = append(r.lookups, host)
	seq := r.answers[host]
	if len(seq) == 0 {
		return nil, &net.DNSError{Err: errNoSuchHost.Error(), Name: host, IsNotFound: true}
	}
	a := seq[0]
	if len(seq) > 1 {
		r.answers[host] = seq[1:]
	}
	return a, nil
}

func (r *stubResolver) Lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lookups...)
}

// recordingDialer stands in for the network. It records every address the
// guard asked to connect to and routes the ones it knows to loopback
// listeners, so tests can use public-looking addresses without sending a
// packet anywhere but 127.0.0.1.
type recordingDialer struct {
	mu     sync.Mutex
	routes map[string]string // "93.184.216.34:80" → "127.0.0.1:54321"
	dials  []string
}

func newDialer() *recordingDialer { return &recordingDialer{routes: map[string]string{}} }

func (d *recordingDialer) route(public, loopback string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.routes[public] = loopback
}

func (d *recordingDialer) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.dials = append(d.dials, address)
	to, ok := d.routes[address]
	d.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("dial %s: connection refused (test dialer has no route)", address)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, to)
}

func (d *recordingDialer) Dials() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dials...)
}

// recordingReporter keeps every reported event.
type recordingReporter struct {
	mu     sync.Mutex
	events []Event
}

func (r *recordingReporter) Report(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recordingReporter) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// mustPolicy builds a policy from entry strings and settings, or fails.
func mustPolicy(t testing.TB, s Settings, entries ...string) *Policy {
	t.Helper()
	var es []Entry
	for _, text := range entries {
		e, err := ParseEntry(text)
		if err != nil {
			t.Fatalf("ParseEntry(%q): %v", text, err)
		}
		es = append(es, e)
	}
	p, err := NewPolicy(es, s)
	if err != nil {
		t.Fatalf("NewPolicy: %v", err)
	}
	return p
}

// testGuard wires a guard to recording fakes.
type testGuard struct {
	*Guard
	resolver *stubResolver
	dialer   *recordingDialer
	reports  *recordingReporter
}

func newTestGuard(t testing.TB, p *Policy, r *stubResolver) *testGuard {
	t.Helper()
	if r == nil {
		r = newResolver()
	}
	tg := &testGuard{resolver: r, dialer: newDialer(), reports: &recordingReporter{}}
	tg.Guard = New(Options{Policy: p, Resolver: r, Reporter: tg.reports, Dial: tg.dialer.Dial})
	t.Cleanup(tg.Close)
	return tg
}
