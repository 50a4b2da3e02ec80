package guard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// tunnel decides a CONNECT as https://host:port/, dials the decided
// addresses through the guard's dial path within the Timeout setting, and
// only then answers 200. Before splicing the two connections together it
// reads the client's first message and refuses the tunnel (closing it;
// the 200 is already sent) when that names another host (tunnel_peek.go).
// Any other refusal is the answer to the CONNECT itself. While it is open,
// the tunnel is decided again whenever the policy changes, and closed
// when it is refused (proxy_tunnel_recheck.go).
func (p *Proxy) tunnel(ctx *proxyContext, w http.ResponseWriter, r *http.Request) {
	if p.tunnels.isClosed() {
		writeText(w, http.StatusServiceUnavailable, "The proxy is shutting down.\nFix: Retry through a running proxy.\n")
		return
	}
	pol := p.g.Policy()
	raw := "https://" + r.Host + "/"
	if _, _, err := net.SplitHostPort(r.Host); err != nil {
		p.refuse(ctx, w, r, &Refusal{Code: CodeInvalid, Reason: ReasonBadHost, URL: raw, Host: r.Host,
			Message: "CONNECT " + strconv.Quote(r.Host) + " does not name a host and port.",
			Fix:     "Send CONNECT host:port, e.g. CONNECT example.com:443."}, 0)
		return
	}
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, pol.settings.Timeout)
	defer cancel()
	d := pol.DecideURL(dctx, p.g.resolver, &url.URL{Scheme: "https", Host: r.Host, Path: "/"}, raw)
	if !d.Allowed {
		if !abandoned(r, d.Code) {
			p.refuse(ctx, w, r, d.Refusal(), d.Port)
		}
		return
	}
	upstream, err := p.dialDecided(dctx, &d)
	if err != nil {
		if ref := p.g.transportRefusal(dctx, err, &d, &pol.settings); !abandoned(r, ref.Code) {
			p.refuse(ctx, w, r, ref, d.Port)
		}
		return
	}
	allowed := Record{URL: raw, Host: d.Host, Port: d.Port, Proxied: true, Elapsed: time.Since(start), WouldRefuse: d.WouldRefuse}
	client, buffered, err := http.NewResponseController(w).Hijack()
	if err != nil {
		upstream.Close()
		writeText(w, http.StatusHTTPVersionNotSupported, "CONNECT needs a connection of its own, which this HTTP version cannot give ("+err.Error()+").\nFix: Speak HTTP/1.1 to the proxy.\n")
		return
	}
	idle := p.opts.TunnelIdleTimeout
	if idle == 0 {
		idle = pol.settings.Timeout
	}
	t := &tunnelConn{client: client, upstream: upstream, idle: idle, p: p,
		ctx: &proxyContext{Context: context.Background(), who: ctx.who}, raw: raw,
		host: d.Host, port: d.Port, addrs: d.Addresses()}
	t.checked.Store(pol)
	if p.opts.CredentialRecheck > 0 {
		_, t.pass, _ = parseBasic(r.Header.Get("Proxy-Authorization")) // authenticate parsed it already
	}
	if !p.tunnels.add(t) {
		t.closeBoth()
		return
	}
	defer p.tunnels.remove(t)
	// The policy may have changed, or the credential been revoked, while
	// the tunnel dialled, before the set held it for the watch (or
	// closeTunnelsOf) to find it. opening decides it again and answers
	// the CONNECT: 200, or the refusal.
	if !p.opening(t) {
		return
	}
	// A client may send its first bytes (a TLS ClientHello) right behind
	// the CONNECT; the server has already read them into its buffer.
	var early []byte
	if n := buffered.Reader.Buffered(); n > 0 {
		early, _ = buffered.Reader.Peek(n)
	}
	// The tunnel's one record is written once its first message is
	// checked: the refusal when it names another host, the allowed
	// CONNECT otherwise (also when the client sent nothing at all).
	first, err := readTunnelFirst(client, early, idle)
	p.runVerdictHook(t)
	// The verdict is claimed under t's lock (allow, refuseOpen): a
	// decision made since the tunnel opened (a policy change, a revoked
	// credential) may already have closed it with its record.
	sent := len(first.bytes) > 0 || err == nil
	if sent {
		if ref := tunnelNameRefusal(first, err, d.Host, d.Port, raw); ref != nil {
			ref.Entry = d.Entry.String()
			ref.Addresses = d.Addresses()
			t.refuseOpen(func() {
				p.recordProxied(ctx, r, Record{Refusal: ref, URL: raw, Host: d.Host, Port: d.Port, Proxied: true, Elapsed: time.Since(start)})
			})
			return
		}
	}
	if !p.allow(t, func() { p.g.record(ctx, allowed) }) {
		return
	}
	if !sent {
		t.closeBoth()
		return
	}
	_ = upstream.SetWriteDeadline(time.Now().Add(idle))
	if _, err := upstream.Write(first.bytes); err != nil {
		t.closeBoth()
		return
	}
	t.run()
}

// dialDecided connects to an allowed decision's addresses through the
// guard's dial path, which checks each address again at connect time.
func (p *Proxy) dialDecided(ctx context.Context, d *Decision) (net.Conn, error) {
	return p.g.dialContext(withPermit(ctx, d), "tcp", joinHostPort(d.Host, strconv.Itoa(int(d.Port))))
}

// tunnelConn is one spliced tunnel. An idle limit rather than a total one
// ends it: a page may keep a busy connection for long, but a tunnel where
// nothing has moved either way for idle is abandoned.
type tunnelConn struct {
	client, upstream net.Conn
	idle             time.Duration
	last             atomic.Int64 // when a byte last moved, in UnixNano
	closeOnce        sync.Once
	closed           atomic.Bool // closeBoth has run

	// What the tunnel was decided on, to decide it again when the
	// policy changes (proxy_tunnel_recheck.go): the caller and
	// credential (over no request's context: the watch decides on its
	// own goroutine, and needs only who asked), the CONNECT as
	// recorded, its decided host and port, and the addresses that were
	// checked and dialled.
	p     *Proxy
	ctx   *proxyContext
	raw   string
	host  string
	port  uint16
	addrs []netip.Addr
	// pass is the credential's password, kept only with
	// ProxyOptions.CredentialRecheck, to ask about it again.
	pass string
	// checked is the policy the tunnel was last decided under.
	checked atomic.Pointer[Policy]
	// mu makes one re-decision at a time, so that two of them never
	// both close the tunnel and record it.
	mu sync.Mutex
	// opened says the CONNECT was answered 200 (under mu): a tunnel
	// refused before that was never open, and its refusal is answered
	// and recorded as any CONNECT's is.
	opened bool
	// revoked says a decision made while the tunnel was open (its policy
	// or its credential) closed it, and recorded that if it records
	// anything; its handler records nothing more.
	revoked atomic.Bool
}

// run copies both ways until both sides have finished. When one side
// stops sending, its end is passed on (a half close), so the other side
// sees it and finishes too; an error or the idle limit closes both.
func (t *tunnelConn) run() {
	t.last.Store(time.Now().UnixNano())
	done := make(chan struct{})
	go func() {
		t.pipe(t.upstream, t.client)
		close(done)
	}()
	t.pipe(t.client, t.upstream)
	<-done
	t.closeBoth()
}

func (t *tunnelConn) pipe(dst, src net.Conn) {
	bufp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bufp)
	buf := *bufp
	for {
		_ = src.SetReadDeadline(time.Now().Add(t.idle))
		n, err := src.Read(buf)
		if n > 0 {
			// Nothing moves under a policy the tunnel was not decided
			// under: right after a change, the first bytes wait for
			// its decision rather than for the watch to get round to it.
			if !t.p.current(t) {
				return
			}
			t.last.Store(time.Now().UnixNano())
			_ = dst.SetWriteDeadline(time.Now().Add(t.idle))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				t.closeBoth()
				return
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if cw, ok := dst.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
				return
			}
			t.closeBoth()
			return
		case isTimeout(err) && time.Since(time.Unix(0, t.last.Load())) < t.idle:
			// Silent this way, busy the other way: the tunnel is in use.
		default:
			t.closeBoth()
			return
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (t *tunnelConn) closeBoth() {
	t.closeOnce.Do(func() {
		t.closed.Store(true)
		_ = t.client.Close()
		_ = t.upstream.Close()
	})
}

// tunnelSet tracks the open tunnels, which an http.Server forgets once
// they take over their connections, so that Close can end them and a
// policy change can decide them again.
type tunnelSet struct {
	mu     sync.Mutex
	open   map[*tunnelConn]struct{}
	closed bool
	wg     sync.WaitGroup
	// watch runs while any tunnel is open, until stop is closed: the
	// proxy's watch of the policy (proxy_tunnel_recheck.go). A proxy
	// without open tunnels runs nothing. closeAll waits for it too, so
	// that nothing is recorded after Close returns.
	watch    func(stop <-chan struct{})
	stop     chan struct{}
	watching sync.WaitGroup
}

func (s *tunnelSet) add(t *tunnelConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.open == nil {
		s.open = map[*tunnelConn]struct{}{}
	}
	s.open[t] = struct{}{}
	s.wg.Add(1)
	if s.stop == nil && s.watch != nil {
		s.stop = make(chan struct{})
		s.watching.Add(1)
		go func(stop <-chan struct{}) {
			defer s.watching.Done()
			s.watch(stop)
		}(s.stop)
	}
	return true
}

func (s *tunnelSet) remove(t *tunnelConn) {
	s.mu.Lock()
	delete(s.open, t)
	if len(s.open) == 0 && s.stop != nil {
		close(s.stop)
		s.stop = nil
	}
	s.mu.Unlock()
	s.wg.Done()
}

// list returns the open tunnels.
func (s *tunnelSet) list() []*tunnelConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*tunnelConn, 0, len(s.open))
	for t := range s.open {
		out = append(out, t)
	}
	return out
}

func (s *tunnelSet) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// closeAll refuses new tunnels, closes the open ones in both directions
// and waits until their copying, and the watch, have stopped.
func (s *tunnelSet) closeAll() {
	s.mu.Lock()
	s.closed = true
	for t := range s.open {
		t.closeBoth()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.watching.Wait()
}

func (p *Proxy) runVerdictHook(t *tunnelConn) {
	if h := p.verdictHook.Load(); h != nil {
		(*h)(t)
	}
}
