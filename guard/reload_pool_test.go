package guard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestReloadNeverReusesAConnectionFromTheOldPolicy: a request is in flight
// to a private address that a literal entry allows; the policy is reloaded
// to PUBLIC WEB and the name now resolves publicly. The in-flight
// request's connection goes back to a pool, but the next request, decided
// under the new policy, must not pick it up: it must connect afresh to the
// public address.
func TestReloadNeverReusesAConnectionFromTheOldPolicy(t *testing.T) {
	r := newResolver("intranet.example.com", []string{"10.0.0.5"}, "intranet.example.com", []string{"93.184.216.34"},
		"www.example.com", []string{"93.184.216.34"})
	g := newTestGuard(t, mustPolicy(t, DefaultSettings(), "intranet.example.com"), r)
	var internalHits atomic.Int32
	release := make(chan struct{})
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		internalHits.Add(1)
		if req.URL.Path == "/slow" {
			<-release
		}
		fmt.Fprint(w, "internal")
	}))
	defer internal.Close()
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { fmt.Fprint(w, "public") }))
	defer public.Close()
	g.dialer.Route("10.0.0.5:80", internal.Listener.Addr().String())
	g.dialer.Route("93.184.216.34:80", public.Listener.Addr().String())

	inFlight := make(chan string)
	go func() {
		resp, err := g.Get(context.Background(), "http://intranet.example.com/slow")
		if err != nil {
			inFlight <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close() // the keep-alive connection returns to its pool
		inFlight <- string(b)
	}()
	for internalHits.Load() == 0 {
		// wait until the request is inside the internal server
		select {
		case msg := <-inFlight:
			t.Fatalf("the first request ended early: %s", msg)
		default:
		}
	}
	g.SetPolicy(mustPolicy(t, DefaultSettings())) // PUBLIC WEB: the private address is refused now
	// Another request after the reload: net/http closes connections that
	// return to a pool only until the next request starts.
	other, err := g.Get(context.Background(), "http://www.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	other.Body.Close()
	close(release)
	if got := <-inFlight; got != "internal" {
		t.Fatalf("the request in flight: %q", got)
	}
	resp, err := g.Get(context.Background(), "http://intranet.example.com/next")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "public" || internalHits.Load() != 1 {
		t.Fatalf("after the reload the request reached %q (internal hits %d): a pooled connection outlived its policy", b, internalHits.Load())
	}
}
