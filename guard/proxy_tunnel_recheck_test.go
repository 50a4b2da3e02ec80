package guard

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// tunnelTarget is a loopback HTTP/1.1 server standing in for one public
// host behind a tunnel. It answers each request on a kept-alive
// connection with its path, and keeps every byte it read, so a test can
// tell exactly what reached it, and when its connection ended.
type tunnelTarget struct {
	ln    net.Listener
	mu    sync.Mutex
	got   bytes.Buffer
	ended chan struct{} // closed when the proxy closes its connection
}

func newTunnelTarget(t *testing.T) *tunnelTarget {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &tunnelTarget{ln: l, ended: make(chan struct{})}
	go func() {
		c, err := l.Accept() // one tunnel, one connection
		if err != nil {
			return
		}
		defer close(s.ended)
		defer c.Close()
		br := bufio.NewReader(io.TeeReader(c, s))
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(req.URL.Path), req.URL.Path)
		}
	}()
	return s
}

// Write keeps what the server read.
func (s *tunnelTarget) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.Write(p)
}

func (s *tunnelTarget) received() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.String()
}

// waitEnded fails unless the proxy closes the server's connection soon.
func (s *tunnelTarget) waitEnded(t *testing.T, msg string) {
	t.Helper()
	select {
	case <-s.ended:
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
	}
}

// openTunnel CONNECTs to host:443 through the proxy at addr with auth.
func openTunnel(t *testing.T, addr, host, auth string) (net.Conn, *bufio.Reader) {
	t.Helper()
	resp, conn, br := rawRequest(t, addr, "CONNECT "+host+":443", auth)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %d", host, resp.StatusCode)
	}
	return conn, br
}

// tunnelGet sends GET path through a tunnel to host.
func tunnelGet(conn net.Conn, host, path string) error {
	_, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
	return err
}

// tunnelRoundTrip sends GET path through a tunnel to host and fails
// unless the target answers it.
func tunnelRoundTrip(t *testing.T, conn net.Conn, br *bufio.Reader, host, path string) {
	t.Helper()
	if err := tunnelGet(conn, host, path); err != nil {
		t.Fatalf("GET %s through the tunnel to %s: %v", path, host, err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET %s through the tunnel to %s: %v", path, host, err)
	}
	if body := readBody(t, resp); resp.StatusCode != 200 || body != path {
		t.Fatalf("GET %s through the tunnel to %s: %d %q", path, host, resp.StatusCode, body)
	}
}

// waitTunnelClosed fails unless the proxy closes the client's end of a
// tunnel soon, and returns whatever the client read before the close.
func waitTunnelClosed(t *testing.T, conn net.Conn, br *bufio.Reader, msg string) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(br)
	if isTimeout(err) {
		t.Fatalf("%s: still open after 5s (read %q)", msg, got)
	}
	return string(got)
}

// TestProxyTunnelClosedWhenThePolicyNoLongerAllowsItsHost: two tunnels
// are open and busy; the policy changes so that one host is refused. That
// tunnel closes at once: the request its client sends right after the
// change never reaches the server, and its one record, made before the
// close, is a refusal that says why and how to fix it. The other tunnel keeps working. Nothing is
// looked up or dialled to decide again.
func TestProxyTunnelClosedWhenThePolicyNoLongerAllowsItsHost(t *testing.T) {
	tests := []struct {
		name        string
		before      []string // nil: PUBLIC WEB
		after       []string
		reason      Reason
		wantMessage string
	}{
		{"its entry removed", []string{"kept.example.com", "gone.example.com"}, []string{"kept.example.com"},
			ReasonNotAllowlisted, "gone.example.com is not on the outbound allowlist."},
		{"the public web narrowed to an allowlist", nil, []string{"kept.example.com"},
			ReasonNotAllowlisted, "gone.example.com is not on the outbound allowlist."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *Policy
			if tt.before != nil {
				before = mustPolicy(t, DefaultSettings(), tt.before...)
			}
			f := newProxyFixture(t, before, newResolver("kept.example.com", []string{"93.184.216.34"}, "gone.example.com", []string{"93.184.216.35"}))
			kept, gone := newTunnelTarget(t), newTunnelTarget(t)
			f.dialer.Route("93.184.216.34:443", kept.ln.Addr().String())
			f.dialer.Route("93.184.216.35:443", gone.ln.Addr().String())
			auth := basic(f.user, f.pass)
			keptConn, keptBr := openTunnel(t, f.proxy.Addr(), "kept.example.com", auth)
			goneConn, goneBr := openTunnel(t, f.proxy.Addr(), "gone.example.com", auth)
			tunnelRoundTrip(t, keptConn, keptBr, "kept.example.com", "/one")
			tunnelRoundTrip(t, goneConn, goneBr, "gone.example.com", "/one")
			lookups, dials := f.resolver.Lookups(), f.dialer.Dials()

			f.SetPolicy(mustPolicy(t, DefaultSettings(), tt.after...))
			// Sent at once: not a byte of it may reach the server.
			_ = tunnelGet(goneConn, "gone.example.com", "/canary")
			if got := waitTunnelClosed(t, goneConn, goneBr, "the tunnel to a host the policy now refuses"); got != "" {
				t.Fatalf("the client read %q after the change", got)
			}
			gone.waitEnded(t, "the server side of the refused tunnel stayed open")
			if got := gone.received(); strings.Contains(got, "canary") || strings.Count(got, "GET ") != 1 {
				t.Fatalf("the server received %q: bytes sent after the change reached it", got)
			}

			tunnelRoundTrip(t, keptConn, keptBr, "kept.example.com", "/two")
			select {
			case <-kept.ended:
				t.Fatal("the tunnel to a host the policy still allows was closed")
			default:
			}

			ev := f.reports.Events()
			if len(ev) != 1 {
				t.Fatalf("refusals = %+v, want one, for the closed tunnel, made before it closed", ev)
			}
			r := ev[0].Refusal
			if ev[0].Host != "gone.example.com" || ev[0].Port != 443 || !ev[0].Proxied || ev[0].Caller.Tool != "proxy" ||
				r.Code != CodeForbidden || r.Reason != tt.reason || r.Remedy != AddEntry("gone.example.com") ||
				!strings.Contains(r.Message, "changed while the tunnel to gone.example.com:443 was open") ||
				!strings.Contains(r.Message, tt.wantMessage) || r.Fix == "" || r.URL != "https://gone.example.com:443/" {
				t.Fatalf("the refusal of the closed tunnel: %+v %+v", ev[0], r)
			}
			if all := f.reports.All(); len(all) != 3 {
				t.Fatalf("records = %+v, want the two allowed CONNECTs and the one refusal", all)
			}
			if l, d := f.resolver.Lookups(), f.dialer.Dials(); !slices.Equal(l, lookups) || !slices.Equal(d, dials) {
				t.Fatalf("deciding again looked up %v and dialled %v", l[len(lookups):], d[len(dials):])
			}
		})
	}
}

// TestProxyIdleTunnelClosedWhenThePolicyChanges: a tunnel through which
// nothing moves after the change is closed too, soon, not when it idles
// out, with its one refusal.
func TestProxyIdleTunnelClosedWhenThePolicyChanges(t *testing.T) {
	f := newProxyFixture(t, mustPolicy(t, DefaultSettings(), "gone.example.com"), newResolver("gone.example.com", []string{"93.184.216.35"}))
	gone := newTunnelTarget(t)
	f.dialer.Route("93.184.216.35:443", gone.ln.Addr().String())
	conn, br := openTunnel(t, f.proxy.Addr(), "gone.example.com", basic(f.user, f.pass))
	tunnelRoundTrip(t, conn, br, "gone.example.com", "/one")

	f.SetPolicy(mustPolicy(t, DefaultSettings(), "kept.example.com"))
	if got := waitTunnelClosed(t, conn, br, "an idle tunnel to a host the policy now refuses"); got != "" {
		t.Fatalf("the client read %q after the change", got)
	}
	gone.waitEnded(t, "the server side of the refused tunnel stayed open")
	if ev := f.reports.Events(); len(ev) != 1 || ev[0].Refusal.Reason != ReasonNotAllowlisted || ev[0].Host != "gone.example.com" {
		t.Fatalf("refusals = %+v, want one not_allowlisted for gone.example.com", ev)
	}
}

// TestProxyTunnelKeptWhenThePolicyStillAllowsIt: a change that still
// allows the tunnel's host (here: another entry added) leaves it open,
// working, and unrecorded.
func TestProxyTunnelKeptWhenThePolicyStillAllowsIt(t *testing.T) {
	f := newProxyFixture(t, mustPolicy(t, DefaultSettings(), "kept.example.com"), newResolver("kept.example.com", []string{"93.184.216.34"}))
	kept := newTunnelTarget(t)
	f.dialer.Route("93.184.216.34:443", kept.ln.Addr().String())
	conn, br := openTunnel(t, f.proxy.Addr(), "kept.example.com", basic(f.user, f.pass))
	tunnelRoundTrip(t, conn, br, "kept.example.com", "/one")
	for i := range 3 {
		f.SetPolicy(mustPolicy(t, DefaultSettings(), "kept.example.com", fmt.Sprintf("other%d.example.com", i)))
		tunnelRoundTrip(t, conn, br, "kept.example.com", fmt.Sprintf("/after-%d", i))
	}
	if ev := f.reports.Events(); len(ev) != 0 {
		t.Fatalf("refusals = %+v, want none", ev)
	}
	if all := f.reports.All(); len(all) != 1 {
		t.Fatalf("records = %+v, want the one allowed CONNECT", all)
	}
}

// TestProxyTunnelDecidedAgainWhenThePolicyChangesWhileItDials: the
// policy changes after a CONNECT was decided but before its tunnel is
// open (while it dials), so no watch has seen it yet. It is decided
// again as it opens and refused as any CONNECT is: answered 403 with the
// refusal instead of the 200, then closed, never carrying a byte, with
// one record, the ordinary refusal (the tunnel never opened).
func TestProxyTunnelDecidedAgainWhenThePolicyChangesWhileItDials(t *testing.T) {
	r := newResolver("gone.example.com", []string{"93.184.216.35"})
	gone := newTunnelTarget(t)
	dialer := guardtest.NewDialer()
	dialer.Route("93.184.216.35:443", gone.ln.Addr().String())
	dialing, release := make(chan struct{}), make(chan struct{})
	reports := &recordingRecorder{}
	g := New(Options{Policy: mustPolicy(t, DefaultSettings(), "gone.example.com"), Resolver: r, Recorder: reports,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			close(dialing)
			<-release
			return dialer.Dial(ctx, network, address)
		}})
	t.Cleanup(g.Close)
	ep, err := g.StartProxy(EmbeddedProxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	user, pass := ep.ProcessCredential()
	conn, err := net.Dial("tcp", ep.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "CONNECT gone.example.com:443 HTTP/1.1\r\nHost: gone.example.com:443\r\nProxy-Authorization: %s\r\n\r\n", basic(user, pass))
	<-dialing
	g.SetPolicy(mustPolicy(t, DefaultSettings(), "kept.example.com"))
	close(release)
	br := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the CONNECT refused as it opened was not answered: %v", err)
	}
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Outbound-Reason") != string(ReasonNotAllowlisted) ||
		!strings.Contains(body, "Outbound refused https://gone.example.com:443/") ||
		!strings.Contains(body, "gone.example.com is not on the outbound allowlist.") || strings.Contains(body, "was open") {
		t.Fatalf("the answer: %d %v %q, want 403 with the refusal", resp.StatusCode, resp.Header, body)
	}
	_ = tunnelGet(conn, "gone.example.com", "/canary")
	if got := waitTunnelClosed(t, conn, br, "a tunnel decided under the old policy"); got != "" {
		t.Fatalf("the client read %q after the refusal", got)
	}
	gone.waitEnded(t, "the server side stayed open")
	if got := gone.received(); got != "" {
		t.Fatalf("the server received %q", got)
	}
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	ev := reports.Events()
	if all := reports.All(); len(ev) != 1 || len(all) != 1 || ev[0].Refusal.Reason != ReasonNotAllowlisted ||
		ev[0].Refusal.Message != "gone.example.com is not on the outbound allowlist." || ev[0].Refusal.URL != "https://gone.example.com:443/" {
		t.Fatalf("records = %+v, want one: the ordinary refusal", all)
	}
}

// tokenProxy serves a proxy whose credentials are tokens (the password)
// that the test can revoke, or make uncheckable, while tunnels are open.
type tokenProxy struct {
	*testGuard
	addr string
	mu   sync.Mutex
	// tokens maps a token to its agent, or to the error Authenticate
	// answers for it.
	tokens map[string]any
	asked  map[string]int // Authenticate's calls, by token
}

func newTokenProxy(t *testing.T, r *guardtest.Resolver, tokens map[string]any) *tokenProxy {
	t.Helper()
	tp := &tokenProxy{testGuard: newTestGuard(t, nil, r), tokens: tokens, asked: map[string]int{}}
	p, err := tp.NewProxy(ProxyOptions{
		Authenticate: func(_ context.Context, _, token string) (Caller, error) {
			tp.mu.Lock()
			defer tp.mu.Unlock()
			tp.asked[token]++
			switch v := tp.tokens[token].(type) {
			case string:
				return Caller{Agent: v}, nil
			case error:
				return Caller{}, v
			}
			return Caller{}, ErrProxyCredential
		},
		AuthHint:          "Use the agent's token.",
		CredentialRecheck: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { p.Close(); srv.Close() })
	tp.addr = srv.Listener.Addr().String()
	return tp
}

// waitAsked polls until Authenticate has been asked about each token
// more than twice since now: the rechecks have seen them.
func (tp *tokenProxy) waitAsked(t *testing.T, tokens ...string) {
	t.Helper()
	tp.mu.Lock()
	from := map[string]int{}
	for _, tok := range tokens {
		from[tok] = tp.asked[tok]
	}
	tp.mu.Unlock()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		tp.mu.Lock()
		seen := true
		for _, tok := range tokens {
			seen = seen && tp.asked[tok] > from[tok]+2
		}
		tp.mu.Unlock()
		if seen {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the open tunnels' tokens %v were not checked again", tokens)
		}
	}
}

func (tp *tokenProxy) set(token string, v any) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if v == nil {
		delete(tp.tokens, token)
		return
	}
	tp.tokens[token] = v
}

// TestProxyTunnelClosedWhenItsCredentialIsRevoked: a tunnel whose token
// is revoked while it is open is closed soon, both ways, with one
// proxy_auth refusal under its agent; after the close nothing more
// reaches the server. A tunnel whose token is still good, or whose token
// could not be checked (the store is down), keeps working; one revoked
// by an ended call (ErrRevokedCredential) closes without a record.
func TestProxyTunnelClosedWhenItsCredentialIsRevoked(t *testing.T) {
	r := newResolver("one.example.com", []string{"93.184.216.34"}, "two.example.com", []string{"93.184.216.35"},
		"three.example.com", []string{"93.184.216.36"}, "four.example.com", []string{"93.184.216.37"})
	tp := newTokenProxy(t, r, map[string]any{"tok-a": "agent-a", "tok-b": "agent-b", "tok-c": "agent-c", "tok-d": "agent-d"})
	servers := map[string]*tunnelTarget{}
	conns := map[string]net.Conn{}
	brs := map[string]*bufio.Reader{}
	for i, name := range []string{"one", "two", "three", "four"} {
		host := name + ".example.com"
		servers[name] = newTunnelTarget(t)
		tp.dialer.Route(fmt.Sprintf("93.184.216.%d:443", 34+i), servers[name].ln.Addr().String())
		conns[name], brs[name] = openTunnel(t, tp.addr, host, basic("any", "tok-"+string("abcd"[i])))
		tunnelRoundTrip(t, conns[name], brs[name], host, "/one")
	}

	tp.set("tok-a", nil)                                                // revoked: unknown from now on
	tp.set("tok-c", errors.New("database is locked"))                   // cannot be checked
	tp.set("tok-d", fmt.Errorf("call ended: %w", ErrRevokedCredential)) // a finished call's
	if got := waitTunnelClosed(t, conns["one"], brs["one"], "the tunnel of a revoked token"); got != "" {
		t.Fatalf("the client read %q after the revocation", got)
	}
	servers["one"].waitEnded(t, "the server side of the revoked token's tunnel stayed open")
	_ = tunnelGet(conns["one"], "one.example.com", "/canary")
	if got := servers["one"].received(); strings.Count(got, "GET ") != 1 {
		t.Fatalf("the server received %q", got)
	}
	waitTunnelClosed(t, conns["four"], brs["four"], "the tunnel of an ended call's credential")
	servers["four"].waitEnded(t, "the server side of an ended call's tunnel stayed open")

	// Checked again and again, the others still work.
	tp.waitAsked(t, "tok-b", "tok-c")
	for _, name := range []string{"two", "three"} {
		tunnelRoundTrip(t, conns[name], brs[name], name+".example.com", "/two")
	}
	ev := tp.reports.Events()
	if len(ev) != 1 {
		t.Fatalf("refusals = %+v, want one, for the revoked token's tunnel", ev)
	}
	rec, ref := ev[0], ev[0].Refusal
	if rec.Caller.Agent != "agent-a" || rec.Caller.Tool != "proxy" || rec.Host != "one.example.com" || rec.Port != 443 || !rec.Proxied ||
		ref.Code != CodeForbidden || ref.Reason != ReasonProxyAuth || !strings.Contains(ref.Message, "revoked while the tunnel was open") ||
		!strings.Contains(ref.Fix, "Use the agent's token.") || strings.Contains(ref.Message+ref.Fix, "tok-a") {
		t.Fatalf("the refusal: %+v %+v", rec, ref)
	}
	if all := tp.reports.All(); len(all) != 5 {
		t.Fatalf("records = %+v, want the four allowed CONNECTs and the one refusal", all)
	}
}

// TestEmbeddedProxyRevokeClosesTheCallsTunnels: a call's credential,
// revoked when the call ends, takes its open tunnels with it, recording
// nothing (a finished call's traffic, like its stragglers); the process
// credential's tunnel keeps working.
func TestEmbeddedProxyRevokeClosesTheCallsTunnels(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("call.example.com", []string{"93.184.216.34"}, "process.example.com", []string{"93.184.216.35"}))
	call, process := newTunnelTarget(t), newTunnelTarget(t)
	f.dialer.Route("93.184.216.34:443", call.ln.Addr().String())
	f.dialer.Route("93.184.216.35:443", process.ln.Addr().String())
	cred := f.proxy.Credential(Caller{Tool: "screenshot", Agent: "helpdesk-bot"})
	callConn, callBr := openTunnel(t, f.proxy.Addr(), "call.example.com", basic(cred.Username, cred.Password))
	procConn, procBr := openTunnel(t, f.proxy.Addr(), "process.example.com", basic(f.user, f.pass))
	tunnelRoundTrip(t, callConn, callBr, "call.example.com", "/one")
	tunnelRoundTrip(t, procConn, procBr, "process.example.com", "/one")

	cred.Revoke()
	if got := waitTunnelClosed(t, callConn, callBr, "the tunnel of an ended call"); got != "" {
		t.Fatalf("the client read %q after the call ended", got)
	}
	call.waitEnded(t, "the server side of an ended call's tunnel stayed open")
	tunnelRoundTrip(t, procConn, procBr, "process.example.com", "/two")
	if ev := f.reports.Events(); len(ev) != 0 {
		t.Fatalf("refusals = %+v, want none", ev)
	}
	if all := f.reports.All(); len(all) != 2 {
		t.Fatalf("records = %+v, want the two allowed CONNECTs", all)
	}
}

// TestProxyTunnelOneRecordWhenThePolicyChangesAsItsFirstMessageIsJudged:
// the policy changes, and the watch closes the tunnel with its refusal,
// just as the handler is about to give its verdict on the first message
// (the hook runs the watch's decision there). The tunnel has that one
// record: not a second refusal (the first message names another host)
// and not an allowed CONNECT after the refusal (it names the tunnel's).
func TestProxyTunnelOneRecordWhenThePolicyChangesAsItsFirstMessageIsJudged(t *testing.T) {
	for name, firstHost := range map[string]string{"another host": "other.example", "the tunnel's host": "gone.example.com"} {
		t.Run(name, func(t *testing.T) {
			f := newProxyFixture(t, mustPolicy(t, DefaultSettings(), "gone.example.com"), newResolver("gone.example.com", []string{"93.184.216.35"}))
			up := newRecordingUpstream(t)
			f.dialer.Route("93.184.216.35:443", up.Addr().String())
			p := f.proxy.proxy
			hook := func(tc *tunnelConn) {
				f.SetPolicy(mustPolicy(t, DefaultSettings(), "kept.example.com"))
				p.current(tc) // what the watch does next
			}
			p.verdictHook.Store(&hook)
			conn := connectThen(t, f, "gone.example.com:443")
			io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+firstHost+"\r\n\r\n")
			assertClosed(t, conn, "the tunnel stayed open")
			up.waitNothing(t)
			if err := f.proxy.Close(); err != nil { // waits for the tunnel's handler
				t.Fatal(err)
			}
			all := f.reports.All()
			if len(all) != 1 || all[0].Refusal == nil || all[0].Refusal.Reason != ReasonNotAllowlisted ||
				!strings.Contains(all[0].Refusal.Message, "changed while the tunnel") {
				t.Fatalf("records = %+v, want one: the refusal of the changed policy", all)
			}
		})
	}
}

// TestEmbeddedProxyRevokeClosesATunnelStillDialling: a call's credential
// revoked while its tunnel dials (before the proxy's set holds the
// tunnel, so Revoke cannot list it) still takes the tunnel with it: it is
// closed as it opens, unanswered and unrecorded, never carrying a byte,
// rather than running until it idles out.
func TestEmbeddedProxyRevokeClosesATunnelStillDialling(t *testing.T) {
	r := newResolver("call.example.com", []string{"93.184.216.34"})
	call := newTunnelTarget(t)
	dialer := guardtest.NewDialer()
	dialer.Route("93.184.216.34:443", call.ln.Addr().String())
	dialing, release := make(chan struct{}), make(chan struct{})
	reports := &recordingRecorder{}
	g := New(Options{Resolver: r, Recorder: reports,
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			close(dialing)
			<-release
			return dialer.Dial(ctx, network, address)
		}})
	t.Cleanup(g.Close)
	ep, err := g.StartProxy(EmbeddedProxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	cred := ep.Credential(Caller{Tool: "screenshot", Agent: "helpdesk-bot"})
	conn, err := net.Dial("tcp", ep.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "CONNECT call.example.com:443 HTTP/1.1\r\nHost: call.example.com:443\r\nProxy-Authorization: %s\r\n\r\n", basic(cred.Username, cred.Password))
	<-dialing
	cred.Revoke()
	close(release)
	_ = tunnelGet(conn, "call.example.com", "/canary")
	if got := waitTunnelClosed(t, conn, bufio.NewReader(conn), "the tunnel of a call that ended while it dialled"); got != "" {
		t.Fatalf("the client read %q; the tunnel must close unanswered", got)
	}
	call.waitEnded(t, "the server side stayed open")
	if got := call.received(); got != "" {
		t.Fatalf("the server received %q", got)
	}
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	if all := reports.All(); len(all) != 0 {
		t.Fatalf("records = %+v, want none: an ended call's tunnel", all)
	}
}
