package guard

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Options configure a Guard. The zero value is usable: the empty allowlist
// (PUBLIC WEB), default settings, the system resolver, no reporter.
type Options struct {
	// Policy is the initial policy; nil means an empty allowlist with
	// DefaultSettings.
	Policy *Policy
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Reporter receives every refusal made on the guard's request paths.
	Reporter Reporter
	// Observer, when set, sees every enforced decision and fetch time.
	Observer Observer
	// Dial, when set, opens connections instead of the network, after the
	// connect-time check has passed. Tests use it to route public test
	// addresses to loopback listeners without sending a packet elsewhere.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// TLSConfig is used for https; nil means the system defaults.
	TLSConfig *tls.Config
	// Now returns the time for reports; nil means time.Now.
	Now func() time.Time
}

// Guard enforces a Policy on outbound HTTP. It is safe for concurrent use;
// SetPolicy may be called at any time and applies to the next decision.
type Guard struct {
	policy    atomic.Pointer[Policy]
	resolver  Resolver
	reporter  Reporter
	observer  Observer
	dial      func(ctx context.Context, network, address string) (net.Conn, error)
	now       func() time.Time
	transport *http.Transport
}

// New returns a Guard.
func New(opts Options) *Guard {
	g := &Guard{resolver: opts.Resolver, reporter: opts.Reporter, observer: opts.Observer, dial: opts.Dial, now: opts.Now}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.now == nil {
		g.now = time.Now
	}
	p := opts.Policy
	if p == nil {
		p = &Policy{list: &Allowlist{}, settings: DefaultSettings()}
	}
	g.policy.Store(p)
	g.transport = &http.Transport{
		Proxy:                  nil, // never environment proxies: they would bypass every check
		DialContext:            g.dialContext,
		TLSClientConfig:        opts.TLSConfig,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           128,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return g
}

// Policy returns the policy in force.
func (g *Guard) Policy() *Policy { return g.policy.Load() }

// SetPolicy swaps in p for every later decision and closes idle
// connections, so that no pooled connection outlives the policy that
// admitted it. Requests in flight finish under the checks they passed.
func (g *Guard) SetPolicy(p *Policy) {
	if p == nil {
		return
	}
	if old := g.policy.Swap(p); old != p {
		g.transport.CloseIdleConnections()
	}
}

// Decide decides raw under the policy in force. It resolves the host but
// sends no request, and reports nothing: it is what `console check` and
// the console's Test a URL box show.
func (g *Guard) Decide(ctx context.Context, raw string) Decision {
	return g.policy.Load().Decide(ctx, g.resolver, raw)
}

// Resolver returns the resolver the guard uses, for components (such as
// the egress proxy) that must resolve exactly as the guard does.
func (g *Guard) Resolver() Resolver { return g.resolver }

// Close releases idle connections.
func (g *Guard) Close() { g.transport.CloseIdleConnections() }
