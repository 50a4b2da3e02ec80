package guard

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// proxyFixture is a test guard with an embedded proxy in front of it.
type proxyFixture struct {
	*testGuard
	proxy      *EmbeddedProxy
	user, pass string
}

func newProxyFixture(t *testing.T, p *Policy, r *guardtest.Resolver) *proxyFixture {
	t.Helper()
	f := &proxyFixture{testGuard: newTestGuard(t, p, r)}
	ep, err := f.StartProxy(EmbeddedProxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ep.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	f.proxy = ep
	f.user, f.pass = ep.ProcessCredential()
	return f
}

// client returns an HTTP client that sends everything through the proxy
// with the given credential and trusts roots for TLS.
func (f *proxyFixture) client(t *testing.T, user, pass string, roots *x509.CertPool) *http.Client {
	t.Helper()
	proxyURL := &url.URL{Scheme: "http", Host: f.proxy.Addr(), User: url.UserPassword(user, pass)}
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// basic is the Proxy-Authorization value for user and pass.
func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// rawRequest writes one request line and headers to the proxy and reads
// the answer, keeping the connection for a tunnel's bytes.
func rawRequest(t *testing.T, proxyAddr, requestLine, auth string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	host := strings.Fields(requestLine)[1]
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		host = u.Host
	} else if strings.HasPrefix(host, "/") {
		host = "example.com" // an origin-form request names its host only here
	}
	msg := requestLine + " HTTP/1.1\r\nHost: " + host + "\r\n"
	if auth != "" {
		msg += "Proxy-Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(conn, msg+"\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: strings.Fields(requestLine)[0]})
	if err != nil {
		t.Fatalf("%s: %v", requestLine, err)
	}
	return resp, conn, br
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assertRefused checks a refusal answer: status, headers, a body with the
// guard's message and fix, and a report under want.
func assertRefused(t *testing.T, f *proxyFixture, resp *http.Response, status int, reason Reason, want Caller) {
	t.Helper()
	body := readBody(t, resp)
	if resp.StatusCode != status || resp.Header.Get("X-Outbound-Reason") != string(reason) {
		t.Fatalf("got %d reason %q, want %d %s; body %q", resp.StatusCode, resp.Header.Get("X-Outbound-Reason"), status, reason, body)
	}
	if resp.Header.Get("X-Outbound-Code") == "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("refusal headers: %v", resp.Header)
	}
	ev := f.reports.Events()
	if len(ev) == 0 {
		t.Fatal("the refusal was not reported")
	}
	last := ev[len(ev)-1]
	if last.Refusal.Reason != reason || last.Caller != want {
		t.Fatalf("reported %s by %+v, want %s by %+v", last.Refusal.Reason, last.Caller, reason, want)
	}
	if !strings.Contains(body, last.Refusal.Message) || !strings.Contains(body, "Fix: "+last.Refusal.AgentFix()) {
		t.Fatalf("body %q lacks the message %q and fix %q", body, last.Refusal.Message, last.Refusal.AgentFix())
	}
	// An internal target's entry stays in the record, for the admin; the
	// client, usually an agent, is told only to ask.
	if last.Refusal.Internal() && (strings.Contains(body, "allowlist") || strings.Contains(body, "literal entry")) {
		t.Fatalf("body %q tells the client how to open an internal target (the record's fix: %q)", body, last.Refusal.Fix)
	}
}

// TestProxyRefusesInternalTargets: neither a tunnel nor a request to an
// internal target is dialled, and each refusal is answered and reported.
func TestProxyRefusesInternalTargets(t *testing.T) {
	targets := []struct {
		name, hostPort string
		getPort        uint16 // the port a GET of http://hostPort minus :443 goes to
		reason         Reason
	}{
		{"loopback", "127.0.0.1:443", 80, ReasonInternalAddress},
		{"loopback on a service port", "127.0.0.1:6379", 6379, ReasonInternalAddress},
		{"private", "10.0.0.5:443", 80, ReasonInternalAddress},
		{"metadata", "169.254.169.254:443", 80, ReasonMetadata},
		{"name resolving privately", "intranet.example.com:443", 80, ReasonInternalAddress},
		{"internal name", "localhost:443", 80, ReasonInternalName},
		{"IPv6 loopback", "[::1]:443", 80, ReasonInternalAddress},
	}
	proxyCaller := Caller{Tool: "proxy"}
	for _, tt := range targets {
		t.Run("CONNECT "+tt.name, func(t *testing.T) {
			f := newProxyFixture(t, nil, newResolver("intranet.example.com", []string{"192.168.1.10"}))
			resp, _, _ := rawRequest(t, f.proxy.Addr(), "CONNECT "+tt.hostPort, basic(f.user, f.pass))
			assertRefused(t, f, resp, http.StatusForbidden, tt.reason, proxyCaller)
			if d := f.dialer.Dials(); len(d) != 0 {
				t.Fatalf("dialled %v", d)
			}
		})
		t.Run("GET "+tt.name, func(t *testing.T) {
			f := newProxyFixture(t, nil, newResolver("intranet.example.com", []string{"192.168.1.10"}))
			target := "http://" + strings.TrimSuffix(tt.hostPort, ":443") + "/admin"
			resp, err := f.client(t, f.user, f.pass, nil).Get(target)
			if err != nil {
				t.Fatal(err)
			}
			assertRefused(t, f, resp, http.StatusForbidden, tt.reason, proxyCaller)
			if ev := f.reports.Events(); ev[0].Refusal.URL != target || ev[0].Port != tt.getPort {
				t.Fatalf("reported URL %q port %d, want %q port %d", ev[0].Refusal.URL, ev[0].Port, target, tt.getPort)
			}
			if d := f.dialer.Dials(); len(d) != 0 {
				t.Fatalf("dialled %v", d)
			}
		})
	}
}

func TestProxyRefusesMalformedRequests(t *testing.T) {
	f := newProxyFixture(t, nil, nil)
	tests := []struct {
		name, line string
		status     int
		want       string
	}{
		{"CONNECT without a port", "CONNECT example.com", http.StatusForbidden, "does not name a host and port"},
		{"origin-form request", "GET /index.html", http.StatusBadRequest, "not a web server"},
		{"a scheme other than http", "GET ftp://example.com/file", http.StatusForbidden, "Only http and https URLs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _, _ := rawRequest(t, f.proxy.Addr(), tt.line, basic(f.user, f.pass))
			if body := readBody(t, resp); resp.StatusCode != tt.status || !strings.Contains(body, tt.want) || !strings.Contains(body, "Fix: ") {
				t.Fatalf("got %d %q, want %d containing %q and a fix", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
	if d := f.dialer.Dials(); len(d) != 0 {
		t.Fatalf("dialled %v", d)
	}
}

// TestProxyForwardsToPublicHosts: an absolute-URI request reaches a
// public host without the proxy credential and with the hop-by-hop
// headers left behind, and the answer comes back whole.
func TestProxyForwardsToPublicHosts(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("www.example.com", []string{"93.184.216.34"}))
	type seen struct{ host, path, proxyAuth, agent, hop string }
	got := make(chan seen, 1)
	publicServer(t, f.testGuard, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Host, r.URL.RequestURI(), r.Header.Get("Proxy-Authorization"), r.UserAgent(), r.Header.Get("X-Hop")}
		w.Header().Set("X-Page", "yes")
		fmt.Fprint(w, "public page")
	}))
	req, _ := http.NewRequest("GET", "http://WWW.Example.com/page?q=1", nil)
	req.Header.Set("User-Agent", "test-browser/1")
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("X-Hop", "for the proxy only")
	resp, err := f.client(t, f.user, f.pass, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != 200 || body != "public page" || resp.Header.Get("X-Page") != "yes" {
		t.Fatalf("got %d %q %v", resp.StatusCode, body, resp.Header)
	}
	want := seen{"www.example.com", "/page?q=1", "", "test-browser/1", ""}
	if s := <-got; s != want {
		t.Fatalf("the server saw %+v, want %+v", s, want)
	}
	if d := f.dialer.Dials(); !slices.Equal(d, []string{"93.184.216.34:80"}) {
		t.Fatalf("dials = %v", d)
	}
	if ev := f.reports.Events(); len(ev) != 0 {
		t.Fatalf("reported %+v", ev)
	}
}

// TestProxyLeavesRedirectsToTheClient: the proxy passes a redirect back;
// the client's next request comes through the proxy and is refused there.
func TestProxyLeavesRedirectsToTheClient(t *testing.T) {
	for _, location := range []string{"http://127.0.0.1:6379/", "http://169.254.169.254/latest/meta-data/", "http://rebound.example.com/"} {
		t.Run(location, func(t *testing.T) {
			f := newProxyFixture(t, nil, newResolver("ticket.example.com", []string{"93.184.216.34"}, "rebound.example.com", []string{"10.1.2.3"}))
			publicServer(t, f.testGuard, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, location, http.StatusFound)
			}))
			resp, err := f.client(t, f.user, f.pass, nil).Get("http://ticket.example.com/status")
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusForbidden || resp.Request.URL.String() != location {
				t.Fatalf("final answer %d for %s, want 403 for %s", resp.StatusCode, resp.Request.URL, location)
			}
			readBody(t, resp)
			if d := f.dialer.Dials(); !slices.Equal(d, []string{"93.184.216.34:80"}) {
				t.Fatalf("dials = %v, want only the public hop", d)
			}
			if ev := f.reports.Events(); len(ev) != 1 || ev[0].Refusal.URL != location {
				t.Fatalf("reports = %+v", ev)
			}
		})
	}
}

// TestProxyRebindingNeverReachesLoopback: the resolver answers public,
// then 127.0.0.1. Each request is decided with its own lookup and dialled
// at the address that lookup checked, never at a second answer.
func TestProxyRebindingNeverReachesLoopback(t *testing.T) {
	for _, mode := range []string{"GET", "CONNECT"} {
		t.Run(mode, func(t *testing.T) {
			f := newProxyFixture(t, nil, newResolver("rebind.example.com", []string{"93.184.216.34"}, "rebind.example.com", []string{"127.0.0.1"}))
			f.dialer.Route("127.0.0.1:80", "127.0.0.1:1") // must never be asked
			f.dialer.Route("127.0.0.1:443", "127.0.0.1:1")
			srv := publicServer(t, f.testGuard, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
			f.dialer.Route("93.184.216.34:443", srv.Listener.Addr().String())
			for i, want := range []int{http.StatusOK, http.StatusForbidden} {
				var resp *http.Response
				if mode == "GET" {
					var err error
					resp, err = f.client(t, f.user, f.pass, nil).Get("http://rebind.example.com/")
					if err != nil {
						t.Fatal(err)
					}
				} else {
					resp, _, _ = rawRequest(t, f.proxy.Addr(), "CONNECT rebind.example.com:443", basic(f.user, f.pass))
				}
				if resp.StatusCode != want {
					t.Fatalf("request %d: %d, want %d", i+1, resp.StatusCode, want)
				}
				if i == 1 && resp.Header.Get("X-Outbound-Reason") != string(ReasonInternalAddress) {
					t.Fatalf("second request refused for %q", resp.Header.Get("X-Outbound-Reason"))
				}
				if mode == "GET" {
					readBody(t, resp)
				}
			}
			if n := len(f.resolver.Lookups()); n != 2 {
				t.Fatalf("%d lookups, want one per request (the dial must not look up again)", n)
			}
			for _, d := range f.dialer.Dials() {
				if strings.HasPrefix(d, "127.") {
					t.Fatalf("dialled the rebound answer: %v", f.dialer.Dials())
				}
			}
		})
	}
}

// TestProxyTunnelDialStopsAtTheConnectCheck: even a decision that lets a
// loopback address through (as a flaw in deciding would) is stopped by
// the connect-time check on the proxy's dial path, before any dial.
func TestProxyTunnelDialStopsAtTheConnectCheck(t *testing.T) {
	f := newProxyFixture(t, nil, nil)
	forged := Decision{Allowed: true, Host: "rebind.example.com", Port: 443, resolved: addrs("127.0.0.1")}
	conn, err := f.proxy.proxy.dialDecided(context.Background(), &forged)
	if conn != nil {
		conn.Close()
	}
	if ref, ok := AsRefusal(err); !ok || ref.Reason != ReasonConnectCheck {
		t.Fatalf("dialDecided = %v, want a connect_check refusal", err)
	}
	if d := f.dialer.Dials(); len(d) != 0 {
		t.Fatalf("dialled %v", d)
	}
}

func TestProxyTimeouts(t *testing.T) {
	s := DefaultSettings()
	s.Timeout = time.Second
	f := newProxyFixture(t, mustPolicy(t, s), newResolver("slow.example.com", []string{"93.184.216.34"}, "down.example.com", []string{"93.184.216.35"}))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	publicServer(t, f.testGuard, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.dialer.Route("93.184.216.35:80", l.Addr().String())
	l.Close() // nothing listens: the connection is refused
	c := f.client(t, f.user, f.pass, nil)
	resp, err := c.Get("http://slow.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	assertRefused(t, f, resp, http.StatusGatewayTimeout, ReasonTimeout, Caller{Tool: "proxy"})
	resp, err = c.Get("http://down.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	assertRefused(t, f, resp, http.StatusBadGateway, ReasonConnect, Caller{Tool: "proxy"})
}

// TestProxySilentBodyIsCutOff: a body that stops for Timeout ends the
// response with a broken connection, never a short body that looks whole.
func TestProxySilentBodyIsCutOff(t *testing.T) {
	s := DefaultSettings()
	s.Timeout = time.Second
	f := newProxyFixture(t, mustPolicy(t, s), newResolver("drip.example.com", []string{"93.184.216.34"}))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	publicServer(t, f.testGuard, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first bytes")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	resp, err := f.client(t, f.user, f.pass, nil).Get("http://drip.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || string(body) != "first bytes" {
		t.Fatalf("read %q, %v; want the first bytes and then an error", body, err)
	}
	if ev := f.reports.Events(); len(ev) != 1 || ev[0].Refusal.Code != CodeTimeout {
		t.Fatalf("reports = %+v, want one timeout", ev)
	}
}

func TestCopyEndToEnd(t *testing.T) {
	src := http.Header{
		"Connection":          {"keep-alive, X-Secret"},
		"X-Secret":            {"hop"},
		"Keep-Alive":          {"timeout=5"},
		"Proxy-Authorization": {"Basic abc"},
		"Proxy-Connection":    {"keep-alive"},
		"Te":                  {"trailers"},
		"Transfer-Encoding":   {"chunked"},
		"Upgrade":             {"websocket"},
		"Accept":              {"text/html"},
		"Cookie":              {"a=1"},
	}
	dst := http.Header{}
	copyEndToEnd(dst, src)
	want := http.Header{"Accept": {"text/html"}, "Cookie": {"a=1"}}
	if fmt.Sprint(dst) != fmt.Sprint(want) {
		t.Fatalf("copied %v, want %v", dst, want)
	}
	dropHopByHop(src)
	if fmt.Sprint(src) != fmt.Sprint(want) {
		t.Fatalf("dropping the hop-by-hop fields left %v, want %v", src, want)
	}
}

func TestNewProxyNeedsAuthenticate(t *testing.T) {
	g := New(Options{})
	if _, err := g.NewProxy(ProxyOptions{}); err == nil || !strings.Contains(err.Error(), "Authenticate is nil") {
		t.Fatalf("NewProxy without Authenticate: %v", err)
	}
	auth := func(context.Context, string, string) (Caller, error) { return Caller{}, nil }
	if _, err := g.NewProxy(ProxyOptions{Authenticate: auth, CredentialRecheck: -time.Second}); err == nil || !strings.Contains(err.Error(), "CredentialRecheck is negative") {
		t.Fatalf("NewProxy with a negative CredentialRecheck: %v", err)
	}
}

// TestProxyAuthenticateFailure: an Authenticate that cannot check (a
// database down) is a 503, not a 407 that would make a client re-prompt.
func TestProxyAuthenticateFailure(t *testing.T) {
	g := newTestGuard(t, nil, nil)
	p, err := g.NewProxy(ProxyOptions{Authenticate: func(context.Context, string, string) (Caller, error) {
		return Caller{}, errors.New("the token store is unavailable")
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	resp, _, _ := rawRequest(t, srv.Listener.Addr().String(), "GET http://example.com/", basic("a", "b"))
	if body := readBody(t, resp); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "the token store is unavailable") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
}

// TestProxyStreamsABodyOfUnknownLengthLive: each piece of a stream reaches
// the client while the server still holds the rest (the proxy flushes it,
// within streamFlushDelay), for an ordinary body and for an event stream.
func TestProxyStreamsABodyOfUnknownLengthLive(t *testing.T) {
	for _, ctype := range []string{"text/plain", "text/event-stream"} {
		t.Run(ctype, func(t *testing.T) {
			f := newProxyFixture(t, mustPolicy(t, DefaultSettings()), newResolver("stream.example.com", []string{"93.184.216.34"}))
			next := make(chan struct{})
			publicServer(t, f.testGuard, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", ctype)
				for i := range 3 {
					fmt.Fprintf(w, "piece %d\n", i)
					w.(http.Flusher).Flush()
					select {
					case <-next: // the client has it: send the next one
					case <-time.After(5 * time.Second):
						return
					}
				}
			}))
			resp, err := f.client(t, f.user, f.pass, nil).Get("http://stream.example.com/")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.ContentLength >= 0 {
				t.Fatalf("the answer has a length (%d): the test needs a stream", resp.ContentLength)
			}
			lines := bufio.NewReader(resp.Body)
			for i := range 3 {
				start := time.Now()
				line, err := lines.ReadString('\n')
				if err != nil || line != fmt.Sprintf("piece %d\n", i) {
					t.Fatalf("piece %d: read %q, %v", i, line, err)
				}
				if waited := time.Since(start); waited > 2*time.Second {
					t.Fatalf("piece %d reached the client after %v: the proxy held it until the server sent more", i, waited)
				}
				next <- struct{}{}
			}
		})
	}
}
