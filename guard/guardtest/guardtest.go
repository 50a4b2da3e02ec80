// Package guardtest has recording fakes for testing code that uses the
// guard without sending a packet anywhere but loopback: a Resolver that
// answers from a table and a Dialer that routes public-looking addresses
// to loopback listeners. Both record what they were asked, so a test can
// assert that a refused URL caused no lookup and no dial.
//
// It imports nothing of Outbound's, so the guard's own tests use it too.
package guardtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
)

// Resolver answers from a table and records every lookup. A name given
// several answers (Answer called more than once) yields them in turn, and
// the last one repeats: that is how a rebinding resolver is written.
type Resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups []string
}

// NewResolver returns a Resolver with no answers.
func NewResolver() *Resolver { return &Resolver{answers: map[string][][]netip.Addr{}} }

// Answer adds an answer for name.
func (r *Resolver) Answer(name string, addrs ...string) *Resolver {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as []netip.Addr
	for _, s := range addrs {
		as = append(as, netip.MustParseAddr(s))
	}
	r.answers[name] = append(r.answers[name], as)
	return r
}

// LookupNetIP implements guard.Resolver. An unknown name is NXDOMAIN. The
// guard asks for absolute names (with a trailing dot); the table and the
// record of lookups use the name without it.
func (r *Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(host, ".")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups = append(r.lookups, host)
	seq := r.answers[host]
	if len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	a := seq[0]
	if len(seq) > 1 {
		r.answers[host] = seq[1:]
	}
	return a, nil
}

// Lookups returns the names looked up so far.
func (r *Resolver) Lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lookups...)
}

// Dialer stands in for the network. It records every address it is asked
// to connect to, and connects the ones it has a route for to loopback.
type Dialer struct {
	mu     sync.Mutex
	routes map[string]string
	dials  []string
}

// NewDialer returns a Dialer with no routes.
func NewDialer() *Dialer { return &Dialer{routes: map[string]string{}} }

// Route sends connections for public ("93.184.216.34:80") to loopback
// ("127.0.0.1:54321").
func (d *Dialer) Route(public, loopback string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.routes[public] = loopback
}

// Dial is the guard's Options.Dial. A dial without a route fails like a
// refused connection.
func (d *Dialer) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.dials = append(d.dials, address)
	to, ok := d.routes[address]
	d.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("dial %s: connection refused (the test dialer has no route)", address)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, to)
}

// Dials returns the addresses dialled so far.
func (d *Dialer) Dials() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dials...)
}

// BareForwardProxy is the floor a proxy's cost is measured against: an
// unguarded forward proxy that sends absolute-URI requests on with tr and
// copies the answer back, checking and recording nothing.
func BareForwardProxy(tr *http.Transport) http.Handler {
	buffers := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.WithContext(r.Context())
		out.RequestURI = ""
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := buffers.Get().(*[]byte)
		_, _ = io.CopyBuffer(struct{ io.Writer }{w}, resp.Body, *buf) // the struct hides ReadFrom, as a proxy's copy loop would
		buffers.Put(buf)
	})
}

// Load runs clients goroutines that each send requests with do while
// more reports true, read every answer to its end and count those
// answered 200. It returns the count and the first failure: an error, or
// a status other than 200, after which that client stops.
func Load(clients int, more func() bool, do func() (*http.Response, error)) (int64, error) {
	var done atomic.Int64
	// The first failure, whatever its type (an atomic.Value would panic on
	// a second one of another type).
	var once sync.Once
	var first error
	fail := func(err error) { once.Do(func() { first = err }) }
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for more() {
				resp, err := do()
				if err != nil {
					fail(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					fail(fmt.Errorf("answered %s", resp.Status))
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return done.Load(), first
}
