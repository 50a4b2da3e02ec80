package web

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// hostServer is a console on 127.0.0.1 that knows the address it is
// bound to, as console serve wires it, with an MCP handler and a tool API
// that count what reached them.
func hostServer(t *testing.T, allowed ...string) (srv *httptest.Server, reached *int) {
	t.Helper()
	reached = new(int)
	count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { *reached++; io.WriteString(w, `{"ok":true}`) })
	var deps Deps
	newHarnessWith(t, func(d *Deps) {
		d.MCP = count
		d.Tools = fakeToolAPI{Handler: count, names: []string{"fetch_url"}}
		deps = *d
	})
	srv = httptest.NewUnstartedServer(nil)
	deps.Listen = srv.Listener.Addr()
	deps.AllowedHosts = allowed
	srv.Config.Handler = New(deps)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, reached
}

func hostGet(t *testing.T, srv *httptest.Server, method, path, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(`{"url":"https://example.com/"}`))
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestRebindingHostsAreMisdirected(t *testing.T) {
	srv, reached := hostServer(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	otherPort := "1"
	if port == "1" {
		otherPort = "2"
	}
	routes := []struct{ method, path string }{
		{"GET", "/login"}, {"GET", "/healthz"}, {"POST", "/api/v1/tools/fetch_url"}, {"POST", "/mcp"}, {"GET", "/metrics"}, {"POST", "/login"},
	}
	for _, host := range []string{"rebind.evil.example", "rebind.evil.example:" + port, "127.0.0.1.nip.io:" + port, "127.0.0.1:" + otherPort, "localhost:" + otherPort, "[::1]:" + otherPort, "10.1.2.3:" + port} {
		for _, rt := range routes {
			status, body := hostGet(t, srv, rt.method, rt.path, host)
			if status != http.StatusMisdirectedRequest {
				t.Errorf("%s %s with Host %s: status %d, want 421", rt.method, rt.path, host, status)
				continue
			}
			name, _, err := net.SplitHostPort(host)
			if err != nil {
				name = host
			}
			if !strings.Contains(body, strings.Trim(name, "[]")) || !strings.Contains(body, "127.0.0.1:"+port) {
				t.Errorf("%s %s with Host %s: the answer names neither the host nor the console's address: %s", rt.method, rt.path, host, body)
			}
		}
	}
	if *reached != 0 {
		t.Errorf("a misdirected request reached MCP or the tool API %d times", *reached)
	}
}

func TestTheConsoleAnswersItsOwnHosts(t *testing.T) {
	srv, reached := hostServer(t, "console.example.com", "other.example:8443")
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port, "console.example.com", "console.example.com:" + port, "other.example:8443"} {
		if status, body := hostGet(t, srv, "GET", "/healthz", host); status != http.StatusOK {
			t.Errorf("/healthz with Host %s: status %d: %s", host, status, body)
		}
		if status, _ := hostGet(t, srv, "GET", "/login", host); status != http.StatusOK {
			t.Errorf("/login with Host %s: status %d", host, status)
		}
	}
	if status, _ := hostGet(t, srv, "POST", "/api/v1/tools/fetch_url", "127.0.0.1:"+port); status != http.StatusOK || *reached != 1 {
		t.Errorf("the tool API at the real address: status %d, reached %d", status, *reached)
	}
	if status, _ := hostGet(t, srv, "GET", "/healthz", "other.example:9999"); status != http.StatusMisdirectedRequest {
		t.Errorf("an allowed host:port on another port: status %d, want 421", status)
	}
}

// TestHostsWithoutListenInfo: a console built with no listener address
// (as tests and embedders do) answers loopback names on any port only.
func TestHostsWithoutListenInfo(t *testing.T) {
	h := newHarness(t)
	for host, want := range map[string]int{
		"127.0.0.1:1": http.StatusOK, "localhost": http.StatusOK, "[::1]:99": http.StatusOK,
		"rebind.evil.example": http.StatusMisdirectedRequest, "10.0.0.1:80": http.StatusMisdirectedRequest,
	} {
		if status, _ := hostGet(t, h.srv, "GET", "/healthz", host); status != want {
			t.Errorf("Host %q: status %d, want %d", host, status, want)
		}
	}
}

// TestUnspecifiedListenAddressTakesAnyIPLiteral: a console on 0.0.0.0
// answers at any of the machine's addresses (an IP literal cannot be
// rebound), on its port only, and still no other name.
func TestUnspecifiedListenAddressTakesAnyIPLiteral(t *testing.T) {
	hc := newHostCheck(&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, nil, nil)
	for host, want := range map[string]bool{
		"192.168.1.5:8080": true, "[fe80::1]:8080": true, "localhost:8080": true,
		"192.168.1.5:8081": false, "rebind.evil.example:8080": false,
	} {
		if got := hc.allows(host, false); got != want {
			t.Errorf("Host %q: allowed %v, want %v", host, got, want)
		}
	}
}
