package guard

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingUpstream is a tunnel's server that keeps every byte it is sent
// and reports, per connection, once the proxy has closed it.
type recordingUpstream struct {
	net.Listener
	mu     sync.Mutex
	got    []byte
	closed chan struct{}
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	u := &recordingUpstream{Listener: l, closed: make(chan struct{}, 4)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
				b, _ := io.ReadAll(c)
				u.mu.Lock()
				u.got = append(u.got, b...)
				u.mu.Unlock()
				u.closed <- struct{}{}
			}()
		}
	}()
	return u
}

// waitNothing fails unless the proxy closed the upstream connection
// without relaying a single byte.
func (u *recordingUpstream) waitNothing(t *testing.T) {
	t.Helper()
	select {
	case <-u.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy kept the upstream connection open")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.got) != 0 {
		t.Fatalf("the upstream received %d bytes: %q", len(u.got), u.got)
	}
}

// assertOneTunnelRefusal fails unless the tunnel's one record is a
// tunnel_name refusal whose message contains want.
func assertOneTunnelRefusal(t *testing.T, f *proxyFixture, want string) {
	t.Helper()
	all := f.reports.All()
	if len(all) != 1 || all[0].Refusal == nil {
		t.Fatalf("records = %+v, want the one refusal", all)
	}
	r := all[0].Refusal
	if r.Code != CodeForbidden || r.Reason != ReasonTunnelName || !strings.Contains(r.Message, want) {
		t.Fatalf("refusal = %+v, want forbidden tunnel_name containing %q", r, want)
	}
	if r.KindOf() != KindPolicy || r.Remedy.Kind != RemedyNone || !strings.Contains(r.Fix, "CONNECT to the host you mean") {
		t.Fatalf("refusal kind/fix = %q %+v %q", r.KindOf(), r.Remedy, r.Fix)
	}
}

// connectThen opens a tunnel to hostPort (whose port-443 address is routed
// to upstream) and returns the client's end after the 200.
func connectThen(t *testing.T, f *proxyFixture, hostPort string) net.Conn {
	t.Helper()
	resp, conn, br := rawRequest(t, f.proxy.Addr(), "CONNECT "+hostPort, basic(f.user, f.pass))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	if br.Buffered() != 0 {
		t.Fatal("bytes after the 200")
	}
	return conn
}

// TestProxyTunnelRefusesAnotherSNI: a tunnel opened to allowed.example
// that carries a ClientHello for other.example is closed before the hello
// reaches the server, and its one record is the tunnel_name refusal.
func TestProxyTunnelRefusesAnotherSNI(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("allowed.example", []string{"93.184.216.34"}))
	up := newRecordingUpstream(t)
	f.dialer.Route("93.184.216.34:443", up.Addr().String())
	conn := connectThen(t, f, "allowed.example:443")
	tc := tls.Client(conn, &tls.Config{ServerName: "other.example"})
	if err := tc.Handshake(); err == nil {
		t.Fatal("a TLS handshake for other.example went through a tunnel to allowed.example")
	}
	up.waitNothing(t)
	assertOneTunnelRefusal(t, f, `names "other.example"`)
}

// TestProxyTunnelRelaysMatchingSNI: a ClientHello naming the CONNECT host
// (in another case, with a trailing dot on the CONNECT) reaches the server
// whole: the handshake, whose transcript covers every byte of the hello,
// completes, and the server saw the name. The one record is the allowed
// CONNECT.
func TestProxyTunnelRelaysMatchingSNI(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("example.com", []string{"93.184.216.34"}))
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.TLS = &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		mu.Lock()
		seen = append(seen, h.ServerName)
		mu.Unlock()
		return nil, nil
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	f.dialer.Route("93.184.216.34:443", srv.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	conn := connectThen(t, f, "EXAMPLE.com.:443")
	tc := tls.Client(conn, &tls.Config{ServerName: "example.com", RootCAs: roots})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake through a matching tunnel: %v", err)
	}
	tc.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "example.com" {
		t.Fatalf("the server saw server names %q", seen)
	}
	if all := f.reports.All(); len(all) != 1 || all[0].Refusal != nil {
		t.Fatalf("records = %+v, want the allowed CONNECT only", all)
	}
}

// TestProxyTunnelRefusesAnotherHTTPHost: plain HTTP inside a tunnel whose
// Host names another host is refused and never sent.
func TestProxyTunnelRefusesAnotherHTTPHost(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("allowed.example", []string{"93.184.216.34"}))
	up := newRecordingUpstream(t)
	f.dialer.Route("93.184.216.34:443", up.Addr().String())
	conn := connectThen(t, f, "allowed.example:443")
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: other.example\r\n\r\n")
	assertClosed(t, conn, "the tunnel stayed open")
	up.waitNothing(t)
	assertOneTunnelRefusal(t, f, `HTTP request names "other.example"`)
}

// TestProxyTunnelRefusesGarbage: first bytes that are neither a
// ClientHello nor an HTTP request cannot be checked, so they are refused.
func TestProxyTunnelRefusesGarbage(t *testing.T) {
	for name, first := range map[string]string{
		"text":        "hello through the tunnel",
		"bad record":  "\x16\x03\x01\x00\x05\x02\x00\x00\x01\x00",
		"huge record": "\x16\x03\x01\xff\xff",
	} {
		t.Run(name, func(t *testing.T) {
			f := newProxyFixture(t, nil, newResolver("allowed.example", []string{"93.184.216.34"}))
			up := newRecordingUpstream(t)
			f.dialer.Route("93.184.216.34:443", up.Addr().String())
			conn := connectThen(t, f, "allowed.example:443")
			io.WriteString(conn, first)
			assertClosed(t, conn, "the tunnel stayed open")
			up.waitNothing(t)
			assertOneTunnelRefusal(t, f, "could not be checked")
		})
	}
}

// TestProxyTunnelToAnIPRefusesAName: a CONNECT to an IP literal decided
// the address, not any name on it: a ClientHello naming a host is refused.
func TestProxyTunnelToAnIPRefusesAName(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver())
	up := newRecordingUpstream(t)
	f.dialer.Route("93.184.216.34:443", up.Addr().String())
	conn := connectThen(t, f, "93.184.216.34:443")
	if err := tls.Client(conn, &tls.Config{ServerName: "other.example"}).Handshake(); err == nil {
		t.Fatal("handshake went through")
	}
	up.waitNothing(t)
	assertOneTunnelRefusal(t, f, `names "other.example"`)
}

// TestProxyTunnelToANameRefusesNoSNI: a ClientHello without server_name
// through a tunnel to a name is refused: the server would pick the host.
func TestProxyTunnelToANameRefusesNoSNI(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("allowed.example", []string{"93.184.216.34"}))
	up := newRecordingUpstream(t)
	f.dialer.Route("93.184.216.34:443", up.Addr().String())
	conn := connectThen(t, f, "allowed.example:443")
	if err := tls.Client(conn, &tls.Config{InsecureSkipVerify: true}).Handshake(); err == nil {
		t.Fatal("handshake went through")
	}
	up.waitNothing(t)
	assertOneTunnelRefusal(t, f, "names no host")
}
