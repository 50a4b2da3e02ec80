package guard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// seenRequests records what each test server was sent.
type seenRequests struct {
	mu   sync.Mutex
	list []string
}

func (s *seenRequests) handler(tag string, redirect func(*http.Request) (string, int)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.list = append(s.list, tag+" "+r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization")+" body="+string(b))
		s.mu.Unlock()
		if to, code := redirect(r); to != "" {
			http.Redirect(w, r, to, code)
		}
	})
}

func (s *seenRequests) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.list...)
}

func TestRedirectsKeepCredentialsAndBodiesOnTheirOrigin(t *testing.T) {
	seen := &seenRequests{}
	redirect := func(r *http.Request) (string, int) {
		switch r.URL.Path {
		case "/downgrade":
			return "http://example.com/plain", http.StatusFound
		case "/put-302":
			return "http://other.example.com/landed", http.StatusFound
		case "/post-307-away":
			return "http://other.example.com/landed", http.StatusTemporaryRedirect
		}
		return "", 0
	}
	tlsSrv := httptest.NewTLSServer(seen.handler("TLS", redirect)) // its certificate names example.com
	defer tlsSrv.Close()
	plain := httptest.NewServer(seen.handler("PLAIN", redirect))
	defer plain.Close()
	other := httptest.NewServer(seen.handler("OTHER", redirect))
	defer other.Close()
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	dialer := guardtest.NewDialer()
	dialer.Route("93.184.216.34:443", tlsSrv.Listener.Addr().String())
	dialer.Route("93.184.216.34:80", plain.Listener.Addr().String())
	dialer.Route("93.184.216.35:80", other.Listener.Addr().String())
	reports := &recordingRecorder{}
	g := New(Options{Resolver: newResolver("example.com", []string{"93.184.216.34"}, "other.example.com", []string{"93.184.216.35"}),
		Dial: dialer.Dial, Recorder: reports, TLSConfig: &tls.Config{RootCAs: pool}})
	defer g.Close()
	auth := http.Header{"Authorization": {"Bearer SECRET"}}

	resp, err := g.Do(context.Background(), Request{URL: "https://example.com/downgrade", Header: auth})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, method := range []string{"PUT", "DELETE", "PATCH"} {
		resp, err := g.Do(context.Background(), Request{Method: method, URL: "http://example.com/put-302", Header: auth, Body: []byte(`{"card":"4111"}`)})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	_, err = g.Do(context.Background(), Request{Method: "POST", URL: "http://example.com/post-307-away", Header: auth, Body: []byte(`{"card":"4111"}`)})
	if ref, ok := AsRefusal(err); !ok || ref.Reason != ReasonCrossOriginBody {
		t.Fatalf("a 307 carrying a body to another origin: %v", err)
	}
	want := []string{
		"TLS GET /downgrade auth=Bearer SECRET body=",
		"PLAIN GET /plain auth= body=", // same host, plain HTTP: no credentials
		`PLAIN PUT /put-302 auth=Bearer SECRET body={"card":"4111"}`,
		"OTHER GET /landed auth= body=",
		`PLAIN DELETE /put-302 auth=Bearer SECRET body={"card":"4111"}`,
		"OTHER GET /landed auth= body=",
		`PLAIN PATCH /put-302 auth=Bearer SECRET body={"card":"4111"}`,
		"OTHER GET /landed auth= body=",
		`PLAIN POST /post-307-away auth=Bearer SECRET body={"card":"4111"}`,
	}
	if got := seen.all(); !slices.Equal(got, want) {
		t.Fatalf("requests seen:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ev := reports.Events(); len(ev) != 1 || ev[0].Refusal.Reason != ReasonCrossOriginBody || len(ev[0].Redirects) != 1 {
		t.Fatalf("reported: %+v", ev)
	}
}

func TestCookieIsDroppedHoweverItIsSpelled(t *testing.T) {
	g := newTestGuard(t, nil, newResolver("a.example.com", []string{"93.184.216.34"}))
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("Cookie") + "|" + r.UserAgent() }))
	defer srv.Close()
	g.dialer.Route("93.184.216.34:80", srv.Listener.Addr().String())
	resp, err := g.Do(context.Background(), Request{URL: "http://a.example.com/", Header: http.Header{"cookie": {"s=1"}, "user-agent": {"curl/8"}}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := <-got; v != "|"+DefaultUserAgent {
		t.Fatalf("the server saw cookie|agent %q", v)
	}
}
