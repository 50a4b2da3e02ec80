// # The egress proxy
//
// Not every client can call this package. A headless browser taking a
// screenshot fetches images, frames, scripts and redirects by itself, and
// agents are written in Python, TypeScript or shell as often as in Go. All
// of them speak HTTP proxy, so Proxy puts the guard in front of them: an
// http.Handler that serves CONNECT host:port tunnels and absolute-URI
// requests (GET http://host/path), and enforces exactly the guard's policy.
//
// Each tunnel and each request is decided under the Policy in force (a
// CONNECT as https://host:port/; an open tunnel again whenever the policy
// changes, closed when refused), with the proxy resolving names itself,
// and is dialled only through the guard's own dial path: the decided
// addresses, checked again in the socket's Control hook. The proxy does not
// follow redirects; the client does, and each hop comes back through the
// proxy to be decided afresh. A refusal is answered at once, never by a
// hang: 403, or 502 for an unreachable host and 504 for a timeout, with
// the guard's message and fix in a text/plain body and the code and reason
// in the X-Outbound-Code and X-Outbound-Reason headers. Each request and
// each tunnel has one Record, made with the caller the credential belongs
// to, like a request on any other path.
//
// # Proxy security
//
// A proxy that anyone can use is the very hole the guard exists to close:
// any process on the machine, or a page in some other browser, could reach
// through it to whatever the allowlist unlocks. So every request must carry
// a Basic credential in Proxy-Authorization, and ProxyOptions.Authenticate
// says whom it belongs to. StartProxy listens on loopback only, with a
// random credential per process and one per call (one per screenshot), so
// each refusal is traced to the call that caused it and a finished call's
// credential stops working when it is revoked. `console proxy` takes
// agents' API tokens and refuses to listen beyond loopback unless told
// --public.
package guard

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// ErrProxyCredential is what ProxyOptions.Authenticate returns, or wraps,
// for a credential it does not know. The proxy answers it with 407.
var ErrProxyCredential = errors.New("the proxy credential is unknown or revoked")

// ErrRevokedCredential is what Authenticate returns, or wraps, for a
// credential its owner revoked moments ago: a straggling request of a call
// that has ended (a browser context's last fetches), not a guess. It is
// answered 407 like any wrong credential but not recorded, so a finished
// screenshot never leaves refusal rows behind it.
var ErrRevokedCredential = errors.New("the proxy credential was revoked when its call ended")

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	// Authenticate maps the user name and password of the request's
	// Proxy-Authorization: Basic header to the Caller its refusals are
	// reported under. It returns ErrProxyCredential for a credential it
	// does not know (answered 407); any other error means it could not
	// check, and is answered 503. Required: there is no open proxy.
	Authenticate func(ctx context.Context, user, pass string) (Caller, error)
	// AuthHint is added to the 407 answer, to tell a client where its
	// credential comes from, e.g. "Use your agent's API token as the password."
	AuthHint string
	// TunnelIdleTimeout closes a CONNECT tunnel through which no byte has
	// moved, in either direction, for this long. Zero means the Timeout
	// setting in force when the tunnel opened, the same bound that applies
	// to a silent server on an absolute-URI request.
	TunnelIdleTimeout time.Duration
	// CredentialRecheck, when positive, asks Authenticate this often
	// again about the credential of each open CONNECT tunnel, and closes
	// the tunnels whose credential it no longer accepts. A tunnel is one
	// request that may last for hours, so a credential revoked where
	// this proxy is not told (another process, another replica) would
	// otherwise be refused only from its next request, never in the
	// tunnel it holds. ErrProxyCredential closes the tunnel with one
	// proxy_auth refusal; ErrRevokedCredential closes it unrecorded, as
	// its stragglers are; any other error (the check could not be made)
	// leaves it open until the next check. For this the proxy keeps each
	// open tunnel's password, for as long as the tunnel lasts. Zero
	// checks a credential only when its request comes.
	CredentialRecheck time.Duration
	// AcceptTicket takes the client's TicketHeader as the ticket its
	// requests serve. Off for a proxy whose clients are web pages (a
	// screenshot's): a page must not label its loads. Either way the header
	// is never forwarded to the target.
	AcceptTicket bool
}

// Proxy is the guarded HTTP forward proxy. It is an http.Handler; serve it
// with an http.Server over HTTP/1.1 (tunnels take over the connection).
// Close ends the tunnels, which an http.Server does not track.
type Proxy struct {
	g         *Guard
	opts      ProxyOptions
	tunnels   tunnelSet
	authLog   authLog
	watchdogs watchdogs // of the absolute-URI requests in flight
	// refused, when set, receives every refusal the proxy makes, with the
	// credential's user name and the request's target, and records it: the
	// embedded proxy keeps them for its call credentials and decides which
	// of a call's refusals get a row (see callRefusals).
	refused func(ctx context.Context, user, target string, rec Record)
	// screened, when set, runs the credential's screen on each request
	// and reports whether it refused (answered and recorded) it.
	screened func(ctx context.Context, w http.ResponseWriter, r *http.Request, user string) bool
	// revoked, when set, reports whether the credential named user was
	// revoked by its owner (an embedded proxy's call credential), for a
	// tunnel that joins the set after its owner closed the credential's
	// tunnels (closeTunnelsOf).
	revoked func(user string) bool
	// verdictHook, for tests only, runs as a tunnel's handler is about to
	// give its verdict on the tunnel's first message.
	verdictHook atomic.Pointer[func(*tunnelConn)]
}

// proxyTool is the tool a proxied request is recorded under when its
// caller names none.
const proxyTool = "proxy"

// NewProxy returns a proxy that enforces g's policy.
func (g *Guard) NewProxy(opts ProxyOptions) (*Proxy, error) {
	if opts.Authenticate == nil {
		return nil, errors.New("guard: ProxyOptions.Authenticate is nil; the proxy never runs open, so give it a function that checks the Basic credential")
	}
	if opts.CredentialRecheck < 0 {
		return nil, errors.New("guard: ProxyOptions.CredentialRecheck is negative; use zero to check a credential only when its request comes, or a positive duration")
	}
	if opts.TunnelIdleTimeout < 0 {
		return nil, errors.New("guard: ProxyOptions.TunnelIdleTimeout is negative; use zero for the Timeout setting, or a positive duration")
	}
	p := &Proxy{g: g, opts: opts, authLog: authLog{window: authLogWindow}}
	p.tunnels.watch = p.watchTunnels
	return p, nil
}

// ServeHTTP authenticates the request, then tunnels a CONNECT or forwards
// an absolute-URI request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	who, ok := p.admit(w, r)
	if !ok {
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(&proxyContext{Context: r.Context(), who: who}, w, r)
		return
	}
	p.forward(who, w, r)
}

// admit returns the caller and credential of a request whose credential,
// ticket and screen let it go on, or answers it and returns false. Out of
// line, its locals take no stack under the request's deeper calls (see
// forward). An absolute-URI request carries them in its forwardContext,
// so it needs no context of its own for them unless a screen runs.
//
//go:noinline
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request) (proxyCaller, bool) {
	caller, user, ok := p.authenticate(w, r)
	if !ok {
		return proxyCaller{}, false
	}
	if !p.takeTicket(w, r, &caller) {
		return proxyCaller{}, false
	}
	who := proxyCaller{caller: caller, user: user}
	if p.screened != nil && p.screened(&proxyContext{Context: r.Context(), who: who}, w, r, user) {
		return proxyCaller{}, false
	}
	return who, true
}

// Close closes every open tunnel in both directions and waits until their
// copying has stopped; later CONNECTs are answered 503. Absolute-URI
// requests are the http.Server's to drain: call its Shutdown first.
func (p *Proxy) Close() error {
	p.tunnels.closeAll()
	return nil
}

// authenticate answers 407 (or 503) itself and returns false unless the
// request carries a credential Authenticate accepts. A request without
// one is the normal first step of the handshake (browsers send the
// credential only after the challenge), and one with a credential revoked
// moments ago is a straggler of an ended call, so neither is recorded; a
// wrong or malformed credential is.
func (p *Proxy) authenticate(w http.ResponseWriter, r *http.Request) (c Caller, user string, ok bool) {
	header := r.Header.Get("Proxy-Authorization")
	if header == "" {
		p.challenge(w, "This proxy needs a credential, and the request carried none.")
		return Caller{}, "", false
	}
	user, pass, ok := parseBasic(header)
	if !ok {
		p.recordWrongCredential(r)
		p.challenge(w, "The Proxy-Authorization header is not Basic base64(user:password).")
		return Caller{}, "", false
	}
	c, err := p.opts.Authenticate(r.Context(), user, pass)
	switch {
	case err == nil:
		if c.Tool == "" {
			c.Tool = proxyTool
		}
		return c, user, true
	case errors.Is(err, ErrProxyCredential):
		p.recordWrongCredential(r)
		p.challenge(w, "The proxy credential is unknown or revoked.")
	case errors.Is(err, ErrRevokedCredential):
		p.challenge(w, "The proxy credential was revoked: the call it was issued for has ended.")
	default:
		writeText(w, http.StatusServiceUnavailable, "The proxy could not check the credential: "+err.Error()+".\nFix: Try again; if it persists, check the proxy's log.\n")
	}
	return Caller{}, "", false
}

// recordWrongCredential makes a request with a wrong or malformed
// credential its one Record. Every such request is counted, but a client
// retrying a stale token, or someone guessing, would otherwise write a
// refusal-log row per attempt: all but the first from a network in a
// minute are marked Burst, and the next unmarked one says how many were
// left out. The record names only the source: the URL and host of a
// request that never authenticated are the sender's words, not facts.
func (p *Proxy) recordWrongCredential(r *http.Request) {
	first, left := p.authLog.admit(r.RemoteAddr, p.g.now())
	msg := "A request from " + r.RemoteAddr + " carried a proxy credential that is unknown, revoked or malformed."
	if left > 0 {
		msg += fmt.Sprintf(" %d more wrong credentials in the last minute were not logged.", left)
	}
	p.g.record(WithCaller(r.Context(), Caller{Tool: proxyTool}), Record{Proxied: true, Burst: !first, Refusal: &Refusal{
		Code: CodeForbidden, Reason: ReasonProxyAuth, Message: msg,
		Fix: "Give the client a current credential. " + p.opts.AuthHint,
	}})
}

func (p *Proxy) challenge(w http.ResponseWriter, why string) {
	h := w.Header()
	h.Set("Proxy-Authenticate", `Basic realm="outbound"`)
	h.Set("X-Outbound-Code", string(CodeForbidden))
	h.Set("X-Outbound-Reason", string(ReasonProxyAuth))
	body := why + "\nFix: Send Proxy-Authorization: Basic base64(user:password), e.g. curl -x http://USER:PASSWORD@PROXY_ADDRESS URL, or set http_proxy=http://USER:PASSWORD@PROXY_ADDRESS."
	if p.opts.AuthHint != "" {
		body += " " + p.opts.AuthHint
	}
	writeText(w, http.StatusProxyAuthRequired, body+"\n")
}

// parseBasic reads "Basic base64(user:password)". It runs on every
// request, so a credential of usual length is decoded on the stack and
// copied once, into the string user and pass share.
func parseBasic(header string) (user, pass string, ok bool) {
	const prefix = "Basic "
	if len(header) < len(prefix) || !strings.EqualFold(header[:len(prefix)], prefix) {
		return "", "", false
	}
	encoded := strings.TrimSpace(header[len(prefix):])
	var src, dst [256]byte
	if len(encoded) > len(src) {
		decoded, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return "", "", false
		}
		return strings.Cut(string(decoded), ":")
	}
	n, err := base64.StdEncoding.Decode(dst[:], src[:copy(src[:], encoded)])
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(dst[:n]), ":")
}

// takeTicket removes TicketHeader from r, so the target never sees it,
// and with AcceptTicket names c's ticket with it. A malformed ticket is
// answered 400 and the request goes no further: a label that cannot be
// stored must not silently drop off the request.
func (p *Proxy) takeTicket(w http.ResponseWriter, r *http.Request, c *Caller) bool {
	ticket := r.Header.Get(TicketHeader)
	r.Header.Del(TicketHeader)
	if !p.opts.AcceptTicket || ticket == "" {
		return true
	}
	if err := CheckTicket(ticket); err != nil {
		te := err.(*TicketError)
		writeText(w, http.StatusBadRequest, "The "+TicketHeader+" header is not a ticket: "+te.Message+"\nFix: "+te.Fix+"\n")
		return false
	}
	c.Ticket = ticket
	return true
}
