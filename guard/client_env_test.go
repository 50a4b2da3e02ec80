package guard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
)

// TestEnvironmentProxiesAreIgnored: a proxy set in the environment would
// carry every request out of the guard's sight; it is never used.
func TestEnvironmentProxiesAreIgnored(t *testing.T) {
	var hit atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	g := newTestGuard(t, nil, newResolver("a.example.com", []string{"93.184.216.34"}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	g.dialer.Route("93.184.216.34:80", srv.Listener.Addr().String())
	resp, err := g.Get(context.Background(), "http://a.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if hit.Load() || !slices.Equal(g.dialer.Dials(), []string{"93.184.216.34:80"}) {
		t.Fatalf("the environment proxy was used (hit %v, dials %v)", hit.Load(), g.dialer.Dials())
	}
}
