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
// (PUBLIC WEB), default settings, the system resolver, no recorder.
type Options struct {
	// Policy is the initial policy; nil means an empty allowlist with
	// DefaultSettings.
	Policy *Policy
	// Wording names the product's controls in refusals' fixes; the zero
	// value speaks neutrally ("add HOST to the allowlist").
	Wording Wording
	// Resolver resolves host names; nil means the system's: the hosts file
	// (/etc/hosts), then DNS through net.DefaultResolver. Localhost names
	// are never looked up: they are the loopback addresses (RFC 6761).
	Resolver Resolver
	// Recorder, when set, receives one Record per request the guard
	// enforces, allowed or refused, on the client and the proxy alike.
	Recorder Recorder
	// Dial, when set, opens connections instead of the network, after the
	// connect-time check has passed. Tests use it to route public test
	// addresses to loopback listeners without sending a packet elsewhere.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// TLSConfig is used for https; nil means the system defaults.
	TLSConfig *tls.Config
	// Now returns the time for records; nil means time.Now.
	Now func() time.Time
}

// Guard enforces a Policy on outbound HTTP. It is safe for concurrent use;
// SetPolicy may be called at any time and applies to the next decision.
type Guard struct {
	snap      atomic.Pointer[snapshot]
	resolver  Resolver
	recorder  Recorder
	dial      func(ctx context.Context, network, address string) (net.Conn, error)
	now       func() time.Time
	tlsConfig *tls.Config
	wording   Wording
}

// snapshot pairs a policy with the HTTP transport whose connections were
// made under it. A pooled connection is reused only by requests decided
// under the policy that admitted it: after a reload, requests use a new
// transport, so a connection to an address the new policy refuses can
// never be picked up again.
type snapshot struct {
	policy    *Policy
	transport *http.Transport
	// retired is closed when a later policy replaces this one: an open
	// CONNECT tunnel was decided once, when it opened, and the proxy
	// waits on this to decide its tunnels again (proxy_tunnel_recheck.go).
	retired chan struct{}
}

// idleConnTimeout also bounds how long a retired transport's connections,
// returned to its pool by requests in flight during a reload, stay open.
const idleConnTimeout = 90 * time.Second

// New returns a Guard.
func New(opts Options) *Guard {
	g := &Guard{resolver: opts.Resolver, recorder: opts.Recorder, dial: opts.Dial, now: opts.Now, tlsConfig: opts.TLSConfig}
	if g.resolver == nil {
		g.resolver = newSystemResolver(systemHostsFile)
	}
	if g.now == nil {
		g.now = time.Now
	}
	g.wording = opts.Wording
	p := opts.Policy
	if p == nil {
		p, _ = NewPolicyRules(nil, DefaultSettings()) // the default settings are valid
	}
	g.snap.Store(&snapshot{policy: p.WithWording(g.wording), transport: g.newTransport(), retired: make(chan struct{})})
	return g
}

func (g *Guard) newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil, // never environment proxies: they would bypass every check
		DialContext:            g.dialContext,
		TLSClientConfig:        g.tlsConfig,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        idleConnTimeout,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// Policy returns the policy in force.
func (g *Guard) Policy() *Policy { return g.snap.Load().policy }

// SetPolicy swaps in p, speaking with the guard's Wording, with a fresh
// connection pool, for every later decision, and closes the old pool's idle connections. Requests in flight
// finish under the checks they passed; their connections go back to the
// old pool, which nothing uses any more, and close when idle. A proxy's
// open CONNECT tunnels are not requests in flight but connections that
// may last for hours: each is decided again under p, off this call, and
// no byte moves through one until it is (proxy_tunnel_recheck.go).
func (g *Guard) SetPolicy(p *Policy) {
	if p == nil {
		return
	}
	if old := g.snap.Swap(&snapshot{policy: p.WithWording(g.wording), transport: g.newTransport(), retired: make(chan struct{})}); old != nil {
		old.transport.CloseIdleConnections()
		close(old.retired)
	}
}

// Decide decides raw under the policy in force. It resolves the host but
// sends no request, and records nothing: it is what `console check` and
// the console's Test a URL box show.
func (g *Guard) Decide(ctx context.Context, raw string) Decision {
	return g.Policy().Decide(ctx, g.resolver, raw)
}

// Precheck makes the checks of Decide that need no DNS lookup, under the
// policy in force; see Policy.Precheck.
func (g *Guard) Precheck(raw string) Decision {
	return g.Policy().Precheck(raw)
}

// PrecheckAs is Precheck for the caller carried by ctx; see
// Policy.PrecheckAs.
func (g *Guard) PrecheckAs(ctx context.Context, raw string) Decision {
	return g.Policy().PrecheckAs(ctx, raw)
}

// Resolver returns the resolver the guard uses, for components (such as
// the egress proxy) that must resolve exactly as the guard does.
func (g *Guard) Resolver() Resolver { return g.resolver }

// Close releases idle connections.
func (g *Guard) Close() { g.snap.Load().transport.CloseIdleConnections() }

// Wording is the wording the guard's refusals use (Options.Wording), so
// that a tool built on the guard words its own fixes the same way.
func (g *Guard) Wording() Wording { return g.wording }
