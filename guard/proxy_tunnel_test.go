package guard

import (
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestProxyTunnelsHTTPS: a real HTTPS request goes through a CONNECT
// tunnel to a TLS server the client trusts; the proxy sees only bytes.
func TestProxyTunnelsHTTPS(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("example.com", []string{"93.184.216.34"}))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "secure %s, credential %q", r.Host, r.Header.Get("Proxy-Authorization"))
	}))
	t.Cleanup(srv.Close)
	f.dialer.Route("93.184.216.34:443", srv.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	resp, err := f.client(t, f.user, f.pass, roots).Get("https://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != 200 || body != `secure example.com, credential ""` {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if d := f.dialer.Dials(); !slices.Equal(d, []string{"93.184.216.34:443"}) {
		t.Fatalf("dials = %v", d)
	}
}

// halfCloseServer reads until the client finishes sending, answers with
// what it read, and closes: it passes only if each end is passed on.
func halfCloseServer(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				got, _ := io.ReadAll(c)
				fmt.Fprintf(c, "read %q", got)
			}()
		}
	}()
	return l
}

// TestProxyTunnelPassesEachEnd: the client's end of sending reaches the
// server, and the server's close reaches the client.
func TestProxyTunnelPassesEachEnd(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("echo.example.com", []string{"93.184.216.34"}))
	f.dialer.Route("93.184.216.34:443", halfCloseServer(t).Addr().String())
	resp, conn, br := rawRequest(t, f.proxy.Addr(), "CONNECT echo.example.com:443", basic(f.user, f.pass))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	const req = "GET / HTTP/1.1\r\nHost: echo.example.com\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(br)
	if err != nil || string(got) != fmt.Sprintf("read %q", req) {
		t.Fatalf("read %q, %v", got, err)
	}
}

// TestProxyTunnelIdleLimit: a tunnel where nothing moves for the Timeout
// setting is closed, so an abandoned tunnel does not live forever.
func TestProxyTunnelIdleLimit(t *testing.T) {
	s := DefaultSettings()
	s.Timeout = time.Second
	f := newProxyFixture(t, mustPolicy(t, s), newResolver("quiet.example.com", []string{"93.184.216.34"}))
	client, server := silentTunnel(t, f, "quiet.example.com")
	start := time.Now()
	if n, err := client.Read(make([]byte, 1)); err == nil {
		t.Fatalf("read %d bytes from a silent tunnel", n)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Fatalf("the tunnel closed after %s, before the idle limit", waited)
	}
	assertClosed(t, server, "the server side stayed open")
}

// silentTunnel opens a tunnel to host:443 (resolving to 93.184.216.34)
// and returns its client end and the server's accepted connection, both
// silent.
func silentTunnel(t *testing.T, f *proxyFixture, host string) (client io.Reader, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			accepted <- c
		}
	}()
	f.dialer.Route("93.184.216.34:443", l.Addr().String())
	resp, _, br := rawRequest(t, f.proxy.Addr(), "CONNECT "+host+":443", basic(f.user, f.pass))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	server = <-accepted
	t.Cleanup(func() { server.Close() })
	return br, server
}

// assertClosed fails unless c's peer has closed it (or does so soon).
func assertClosed(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("%s (%v)", msg, err)
	}
}

// TestEmbeddedProxyCloseEndsTunnels: Close ends open tunnels on both
// sides, returns, and can be called again.
func TestEmbeddedProxyCloseEndsTunnels(t *testing.T) {
	f := newProxyFixture(t, nil, newResolver("echo.example.com", []string{"93.184.216.34"}))
	client, server := silentTunnel(t, f, "echo.example.com")
	if err := f.proxy.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Read(make([]byte, 1)); err == nil {
		t.Fatal("the client side of the tunnel stayed open after Close")
	}
	assertClosed(t, server, "the server side of the tunnel stayed open after Close")
	if err := f.proxy.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if c, err := net.Dial("tcp", f.proxy.Addr()); err == nil {
		c.Close()
		t.Fatal("the proxy still accepts connections after Close")
	}
}

// TestProxyCredentials: without the right credential nothing is decided
// or dialled. A wrong or malformed credential is recorded; a missing one
// is the normal first step of a browser's handshake and is not.
func TestProxyCredentials(t *testing.T) {
	tests := []struct {
		name     string
		auth     func(f *proxyFixture) string
		reported bool
	}{
		{"missing", func(*proxyFixture) string { return "" }, false},
		{"not Basic", func(*proxyFixture) string { return "Bearer abc" }, true},
		{"not base64", func(*proxyFixture) string { return "Basic %%%" }, true},
		{"wrong password", func(f *proxyFixture) string { return basic(f.user, f.pass+"x") }, true},
		{"unknown user", func(f *proxyFixture) string { return basic("someone", f.pass) }, true},
	}
	for _, tt := range tests {
		for _, line := range []string{"CONNECT www.example.com:443", "GET http://www.example.com/"} {
			t.Run(tt.name+" "+strings.Fields(line)[0], func(t *testing.T) {
				f := newProxyFixture(t, nil, newResolver("www.example.com", []string{"93.184.216.34"}))
				resp, _, _ := rawRequest(t, f.proxy.Addr(), line, tt.auth(f))
				body := readBody(t, resp)
				if resp.StatusCode != http.StatusProxyAuthRequired || resp.Header.Get("Proxy-Authenticate") != `Basic realm="outbound"` || resp.Header.Get("X-Outbound-Reason") != string(ReasonProxyAuth) || !strings.Contains(body, "Proxy-Authorization: Basic") {
					t.Fatalf("got %d %v %q, want a 407 challenge saying how to authenticate", resp.StatusCode, resp.Header, body)
				}
				if d, l := f.dialer.Dials(), f.resolver.Lookups(); len(d) != 0 || len(l) != 0 {
					t.Fatalf("dials %v, lookups %v", d, l)
				}
				ev := f.reports.Events()
				if tt.reported != (len(ev) == 1) {
					t.Fatalf("reports = %+v, want reported=%v", ev, tt.reported)
				}
				if tt.reported && (ev[0].Refusal.Reason != ReasonProxyAuth || ev[0].Caller.Tool != "proxy" || strings.Contains(ev[0].Refusal.Message, f.pass)) {
					t.Fatalf("report %+v", ev[0])
				}
			})
		}
	}
}

// TestProxyPerCallCredentials: a call's credential ties its refusals to
// its Caller, and stops working once revoked; others go on working.
func TestProxyPerCallCredentials(t *testing.T) {
	f := newProxyFixture(t, nil, nil)
	call := Caller{Tool: "screenshot", Agent: "helpdesk-bot", Thread: "ticket-42"}
	cred := f.proxy.Credential(call)
	user, pass, revoke := cred.Username, cred.Password, cred.Revoke
	if user == f.user || pass == f.pass {
		t.Fatal("the call's credential is the process credential")
	}
	resp, err := f.client(t, user, pass, nil).Get("http://169.254.169.254/latest/meta-data/")
	if err != nil {
		t.Fatal(err)
	}
	// A call's first refusal is recorded when the call ends (see
	// callRefusals).
	revoke()
	revoke() // a second revoke is harmless
	assertRefused(t, f, resp, http.StatusForbidden, ReasonMetadata, call)
	otherCred := f.proxy.Credential(Caller{Agent: "other"})
	other, otherPass := otherCred.Username, otherCred.Password
	before := len(f.reports.Events())
	for _, cred := range []struct {
		name, user, pass string
		want             int
	}{
		{"revoked", user, pass, http.StatusProxyAuthRequired},
		{"another call's", other, otherPass, http.StatusForbidden},
		{"process", f.user, f.pass, http.StatusForbidden},
	} {
		resp, _, _ := rawRequest(t, f.proxy.Addr(), "CONNECT 10.0.0.1:443", basic(cred.user, cred.pass))
		if readBody(t, resp); resp.StatusCode != cred.want {
			t.Fatalf("%s credential: %d, want %d", cred.name, resp.StatusCode, cred.want)
		}
	}
	otherCred.Revoke() // the other call ends: its refusal is recorded
	ev := f.reports.Events()
	// The revoked credential's request is a straggler of an ended call:
	// refused, but not recorded. The two others are one record each.
	if n := len(ev) - before; n != 2 {
		t.Fatalf("%d records for the three requests, want 2 (none for the revoked credential): %+v", n, ev[before:])
	}
	if got := ev[len(ev)-1].Caller; got != (Caller{Tool: "proxy", Agent: "other"}) {
		t.Fatalf("a Caller without a Tool was reported as %+v", got)
	}
	// A wrong password for the same user is a guess, and is recorded.
	resp, _, _ = rawRequest(t, f.proxy.Addr(), "CONNECT 10.0.0.1:443", basic(user, "wrong-password-of-32-characters!"))
	if readBody(t, resp); resp.StatusCode != http.StatusProxyAuthRequired {
		t.Fatalf("wrong password: %d, want 407", resp.StatusCode)
	}
	if ev := f.reports.Events(); len(ev) != before+3 || ev[len(ev)-1].Refusal.Reason != ReasonProxyAuth {
		t.Fatalf("a wrong password was not recorded as proxy_auth: %+v", ev[before:])
	}
	// A minute after its call ended, the credential is forgotten.
	f.proxy.mu.Lock()
	f.proxy.forgetRevokedLocked(time.Now().Add(revokedGrace + time.Second))
	_, kept := f.proxy.creds[user]
	f.proxy.mu.Unlock()
	if kept {
		t.Fatal("a credential revoked over a minute ago is still kept")
	}
	if d := f.dialer.Dials(); len(d) != 0 {
		t.Fatalf("dialled %v", d)
	}
}
