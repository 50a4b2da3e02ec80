package guard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// publicServer serves h on loopback and routes a public-looking address to
// it through the test guard's dialer.
func publicServer(t *testing.T, g *testGuard, publicAddr string, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	g.dialer.Route(publicAddr, srv.Listener.Addr().String())
	return srv
}

func TestGetFollowsRedirectAndReportsFinalURL(t *testing.T) {
	r := newResolver("a.example.com", []string{"93.184.216.34"}, "b.example.com", []string{"93.184.216.35"})
	g := newTestGuard(t, nil, r)
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.Host {
		case "a.example.com":
			http.Redirect(w, req, "http://b.example.com/final", http.StatusFound)
		default:
			fmt.Fprint(w, "final page")
		}
	})
	publicServer(t, g, "93.184.216.34:80", h)
	publicServer(t, g, "93.184.216.35:80", h)
	resp, err := g.Get(context.Background(), "http://a.example.com/start")
	if err != nil {
		t.Fatal(err)
	}
	body, err := resp.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != "final page" || resp.URL.String() != "http://b.example.com/final" {
		t.Fatalf("got %q from %s", body, resp.URL)
	}
	if !slices.Equal(resp.Redirects, []string{"http://a.example.com/start"}) {
		t.Fatalf("Redirects = %v", resp.Redirects)
	}
	if got := g.dialer.Dials(); !slices.Equal(got, []string{"93.184.216.34:80", "93.184.216.35:80"}) {
		t.Fatalf("dials = %v", got)
	}
}

// TestRedirectIntoInternalTargetsIsRefusedBeforeTheSecondFetch: the first
// hop is fetched, the redirect is decided, and nothing is dialled for it.
func TestRedirectIntoInternalTargetsIsRefusedBeforeTheSecondFetch(t *testing.T) {
	targets := []struct {
		location string
		reason   Reason
	}{
		{"http://127.0.0.1:6379/", ReasonInternalAddress},
		{"http://127.0.0.1/admin", ReasonInternalAddress},
		{"http://169.254.169.254/latest/meta-data/iam/", ReasonMetadata},
		{"http://10.0.0.5/", ReasonInternalAddress},
		{"http://localhost/", ReasonInternalName},
		{"http://rebound.example.com/", ReasonInternalAddress},
	}
	for _, tt := range targets {
		t.Run(tt.location, func(t *testing.T) {
			r := newResolver("ticket.example.com", []string{"93.184.216.34"}, "rebound.example.com", []string{"192.168.1.1"})
			g := newTestGuard(t, nil, r)
			var hits atomic.Int32
			publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				hits.Add(1)
				http.Redirect(w, req, tt.location, http.StatusMovedPermanently)
			}))
			_, err := g.Get(context.Background(), "http://ticket.example.com/status")
			ref, ok := AsRefusal(err)
			if !ok || ref.Reason != tt.reason {
				t.Fatalf("err = %v, want reason %s", err, tt.reason)
			}
			if hits.Load() != 1 {
				t.Fatalf("first hop fetched %d times, want 1", hits.Load())
			}
			if got := g.dialer.Dials(); !slices.Equal(got, []string{"93.184.216.34:80"}) {
				t.Fatalf("dials = %v, want only the first hop", got)
			}
			ev := g.reports.Events()
			if len(ev) != 1 || !slices.Equal(ev[0].Redirects, []string{"http://ticket.example.com/status"}) {
				t.Fatalf("report should carry the chain: %+v", ev)
			}
		})
	}
}

func TestSelfRedirectIsTooLarge(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("loop.example.com", []string{"93.184.216.34"}))
	var hits atomic.Int32
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		http.Redirect(w, req, req.URL.Path, http.StatusFound)
	}))
	_, err := g.Get(context.Background(), "http://loop.example.com/again")
	ref, ok := AsRefusal(err)
	if !ok || ref.Code != CodeTooLarge || ref.Reason != ReasonRedirects {
		t.Fatalf("err = %v, want too_large/redirects", err)
	}
	if want := int32(DefaultSettings().Redirects + 1); hits.Load() != want {
		t.Fatalf("fetched %d times, want %d (the first request and %d redirects)", hits.Load(), want, want-1)
	}
}

// TestRebindingNeverConnectsToThePrivateAnswer: the resolver answers
// public first and private after. The first request connects to the
// public answer; the second is refused before any dial.
func TestRebindingNeverConnectsToThePrivateAnswer(t *testing.T) {
	r := newResolver("rebind.example.com", []string{"93.184.216.34"}, "rebind.example.com", []string{"127.0.0.1"})
	g := newTestGuard(t, nil, r)
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { fmt.Fprint(w, "ok") }))
	g.dialer.Route("127.0.0.1:80", "127.0.0.1:1") // would be refused anyway; it must not even be asked
	resp, err := g.Get(context.Background(), "http://rebind.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	g.Guard.Close()
	_, err = g.Get(context.Background(), "http://rebind.example.com/")
	if ref, ok := AsRefusal(err); !ok || ref.Reason != ReasonInternalAddress {
		t.Fatalf("second request: %v, want internal_address", err)
	}
	for _, d := range g.dialer.Dials() {
		if strings.HasPrefix(d, "127.") {
			t.Fatalf("dialled the private answer: %v", g.dialer.Dials())
		}
	}
}

func TestConnectCheck(t *testing.T) {
	public := mustEntry(t, "intranet.corp")
	tests := []struct {
		name    string
		pm      permit
		address string
		ok      bool
	}{
		{"decided public address", permit{host: "a.example.com", port: 80, addrs: addrs("93.184.216.34")}, "93.184.216.34:80", true},
		{"mapped form of the decided address", permit{host: "a.example.com", port: 80, addrs: addrs("93.184.216.34")}, "[::ffff:93.184.216.34]:80", true},
		{"an address that was not decided", permit{host: "a.example.com", port: 80, addrs: addrs("93.184.216.34")}, "127.0.0.1:80", false},
		{"another port", permit{host: "a.example.com", port: 80, addrs: addrs("93.184.216.34")}, "93.184.216.34:22", false},
		{"private without entry", permit{host: "a.example.com", port: 80, addrs: addrs("10.0.0.1")}, "10.0.0.1:80", false},
		{"private with literal entry", permit{host: "intranet.corp", port: 80, entry: public, addrs: addrs("10.0.0.1")}, "10.0.0.1:80", true},
		{"metadata with name entry", permit{host: "intranet.corp", port: 80, entry: public, addrs: addrs("169.254.169.254")}, "169.254.169.254:80", false},
		{"garbage", permit{host: "a.example.com", port: 80}, "not-an-address", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkConnect(&tt.pm, tt.address)
			if (err == nil) != tt.ok {
				t.Fatalf("checkConnect(%s) = %v, want ok=%v", tt.address, err, tt.ok)
			}
			if err != nil {
				if ref, ok := AsRefusal(err); !ok || ref.Reason != ReasonConnectCheck {
					t.Fatalf("err = %v, want a connect_check refusal", err)
				}
			}
		})
	}
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func TestTimeoutCoversHeadersAndBody(t *testing.T) {
	s := DefaultSettings()
	s.Timeout = time.Second
	g := newTestGuard(t, mustPolicy(t, s), newResolver("slow.example.com", []string{"93.184.216.34"}, "drip.example.com", []string{"93.184.216.35"}))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-release:
		case <-req.Context().Done():
		}
	}))
	publicServer(t, g, "93.184.216.35:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Write([]byte("first bytes"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-req.Context().Done():
		}
	}))
	_, err := g.Get(context.Background(), "http://slow.example.com/")
	if ref, ok := AsRefusal(err); !ok || ref.Code != CodeTimeout {
		t.Fatalf("slow headers: %v, want timeout", err)
	}
	resp, err := g.Get(context.Background(), "http://drip.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	_, err = resp.ReadAll()
	if ref, ok := AsRefusal(err); !ok || ref.Code != CodeTimeout {
		t.Fatalf("slow body: %v, want timeout", err)
	}
}

func TestBodyLimit(t *testing.T) {
	s := DefaultSettings()
	s.MaxBytes = 4096
	g := newTestGuard(t, mustPolicy(t, s), newResolver("big.example.com", []string{"93.184.216.34"}))
	payload := strings.Repeat("x", 10000)
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/declared":
			w.Header().Set("Content-Length", fmt.Sprint(len(payload)))
			io.WriteString(w, payload)
		case "/streamed":
			for i := 0; i < 10; i++ { // chunked: no length is declared
				io.WriteString(w, payload[:1000])
				w.(http.Flusher).Flush()
			}
		case "/fits":
			io.WriteString(w, payload[:4096])
		}
	}))
	for path, reason := range map[string]Reason{"/declared": ReasonDeclaredSize, "/streamed": ReasonStreamedSize} {
		resp, err := g.Get(context.Background(), "http://big.example.com"+path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := resp.ReadAll()
		if ref, ok := AsRefusal(err); !ok || ref.Code != CodeTooLarge || ref.Reason != reason || body != nil {
			t.Fatalf("%s: %v (%d bytes), want too_large/%s and no body", path, err, len(body), reason)
		}
	}
	resp, err := g.Get(context.Background(), "http://big.example.com/fits")
	if err != nil {
		t.Fatal(err)
	}
	if body, err := resp.ReadAll(); err != nil || len(body) != 4096 {
		t.Fatalf("a body of exactly max_bytes: %d bytes, %v", len(body), err)
	}
	if n := len(g.reports.Events()); n != 2 {
		t.Fatalf("reported %d refusals, want 2", n)
	}
}

func TestHeadersNoCookiesHonestAgentNoCredentialsAcrossHosts(t *testing.T) {
	r := newResolver("a.example.com", []string{"93.184.216.34"}, "b.example.com", []string{"93.184.216.35"})
	g := newTestGuard(t, nil, r)
	type seen struct{ host, path, cookie, auth, agent string }
	var log []seen
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		log = append(log, seen{req.Host, req.URL.Path, req.Header.Get("Cookie"), req.Header.Get("Authorization"), req.UserAgent()})
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "secret"})
		switch req.URL.Path {
		case "/1":
			http.Redirect(w, req, "/2", http.StatusFound)
		case "/2":
			http.Redirect(w, req, "http://b.example.com/3", http.StatusFound)
		}
	})
	publicServer(t, g, "93.184.216.34:80", h)
	publicServer(t, g, "93.184.216.35:80", h)
	resp, err := g.Do(context.Background(), Request{URL: "http://a.example.com/1", Header: http.Header{"Authorization": {"Bearer t0ken"}, "Cookie": {"c=1"}}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := []seen{
		{"a.example.com", "/1", "", "Bearer t0ken", DefaultUserAgent},
		{"a.example.com", "/2", "", "Bearer t0ken", DefaultUserAgent},
		{"b.example.com", "/3", "", "", DefaultUserAgent},
	}
	if !slices.Equal(log, want) {
		t.Fatalf("requests seen:\n%+v\nwant:\n%+v", log, want)
	}
}

func TestPostRedirectRules(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("api.example.com", []string{"93.184.216.34"}))
	var got []string
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		got = append(got, req.Method+" "+req.URL.Path+" "+string(b))
		switch req.URL.Path {
		case "/307":
			http.Redirect(w, req, "/kept", http.StatusTemporaryRedirect)
		case "/303":
			http.Redirect(w, req, "/get", http.StatusSeeOther)
		}
	}))
	for _, path := range []string{"/307", "/303"} {
		resp, err := g.Do(context.Background(), Request{Method: "POST", URL: "http://api.example.com" + path, Body: []byte(`{"a":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := []string{`POST /307 {"a":1}`, `POST /kept {"a":1}`, `POST /303 {"a":1}`, "GET /get "}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestHTTPSWithTheDecidedAddress(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { fmt.Fprint(w, "secure") }))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	r := newResolver("example.com", []string{"93.184.216.34"})
	tg := &testGuard{resolver: r, dialer: guardtest.NewDialer(), reports: &recordingRecorder{}}
	tg.Guard = New(Options{Resolver: r, Recorder: tg.reports, Dial: tg.dialer.Dial, TLSConfig: &tls.Config{RootCAs: pool}})
	defer tg.Close()
	tg.dialer.Route("93.184.216.34:443", srv.Listener.Addr().String())
	resp, err := tg.Get(context.Background(), "https://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	if body, err := resp.ReadAll(); err != nil || string(body) != "secure" {
		t.Fatalf("got %q, %v", body, err)
	}
}

func TestSetPolicyAppliesToTheNextDecision(t *testing.T) {
	r := newResolver("a.example.com", []string{"93.184.216.34"})
	g := newTestGuard(t, nil, r)
	publicServer(t, g, "93.184.216.34:80", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {}))
	resp, err := g.Get(context.Background(), "http://a.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	g.SetPolicy(mustPolicy(t, DefaultSettings(), "b.example.com"))
	if _, err := g.Get(context.Background(), "http://a.example.com/"); err == nil {
		t.Fatal("the old policy still applied after SetPolicy")
	}
	if d := g.Decide(context.Background(), "http://a.example.com/"); d.Reason != ReasonNotAllowlisted {
		t.Fatalf("Decide after reload: %s", d.Reason)
	}
}

func TestUnreachableIsARefusal(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("down.example.com", []string{"93.184.216.34"}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	g.dialer.Route("93.184.216.34:80", addr)
	_, err = g.Get(context.Background(), "http://down.example.com/")
	if ref, ok := AsRefusal(err); !ok || ref.Code != CodeUnreachable || ref.Reason != ReasonConnect {
		t.Fatalf("err = %v, want unreachable/connect", err)
	}
}

// countingRecorder counts Records by outcome.
type countingRecorder struct {
	mu      sync.Mutex
	allowed map[string]int
	refused map[Code]int
	fetches int
}

func (o *countingRecorder) Record(rec Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if rec.Allowed() {
		o.allowed[rec.Caller.Tool]++
		if rec.Elapsed > 0 && rec.Host != "" {
			o.fetches++
		}
	} else {
		o.refused[rec.Refusal.Code]++
	}
}

func TestRecorderSeesEveryEnforcedDecision(t *testing.T) {
	r := newResolver("a.example.com", []string{"93.184.216.34"})
	obs := &countingRecorder{allowed: map[string]int{}, refused: map[Code]int{}}
	dialer := guardtest.NewDialer()
	g := New(Options{Resolver: r, Dial: dialer.Dial, Recorder: obs})
	defer g.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {}))
	defer srv.Close()
	dialer.Route("93.184.216.34:80", srv.Listener.Addr().String())
	ctx := WithCaller(context.Background(), Caller{Tool: "fetch_url"})
	resp, err := g.Get(ctx, "http://a.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	g.Get(ctx, "http://10.0.0.1/")
	g.Decide(ctx, "http://10.0.0.2/") // a decision that is not enforced is not observed
	if obs.allowed["fetch_url"] != 1 || obs.refused[CodeForbidden] != 1 || obs.fetches != 1 {
		t.Fatalf("observed allowed %v refused %v fetches %d", obs.allowed, obs.refused, obs.fetches)
	}
}
