package guard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
)

// noNetworkResolver is the real Go resolver (it reads the hosts file and
// builds DNS queries as the system's would) whose every attempt to reach
// a DNS server is counted and fails: a test using it sends no packet, and
// can tell whether DNS was asked at all.
func noNetworkResolver(asked *atomic.Int32) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		asked.Add(1)
		return nil, errors.New("this test has no DNS server")
	}}
}

var loopbackPair = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

func TestLocalhostResolvesToLoopbackWithoutDNS(t *testing.T) {
	for _, name := range []string{"localhost", "LOCALHOST", "localhost.", "app.localhost"} {
		t.Run(name, func(t *testing.T) {
			var asked atomic.Int32
			p := mustPolicy(t, DefaultSettings(), "localhost:8080", "app.localhost:8080")
			d := p.Decide(context.Background(), noNetworkResolver(&asked), "http://"+name+":8080/")
			if !d.Allowed {
				t.Fatalf("a literal entry for %s was refused: %s %s", name, d.Reason, d.Message)
			}
			if got := d.Addresses(); !slices.Equal(got, loopbackPair) {
				t.Fatalf("%s resolved to %v, want %v", name, got, loopbackPair)
			}
			if n := asked.Load(); n != 0 {
				t.Fatalf("%d DNS queries for %s; a localhost name is never asked of DNS (RFC 6761)", n, name)
			}
			// No resolver is asked at all, whatever it would answer.
			raw := &rawResolver{}
			if d := p.Decide(context.Background(), raw, "http://"+name+":8080/"); !d.Allowed || len(raw.names) != 0 {
				t.Fatalf("allowed %v after asking the resolver for %q", d.Allowed, raw.names)
			}
		})
	}
}

func TestRefusedLocalhostFixWorksAsSuggested(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		fmt.Fprint(w, "local service")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	target := "http://localhost:" + strconv.Itoa(port) + "/"

	var asked atomic.Int32
	reports := &recordingRecorder{}
	// The real dialer (loopback only: the server is on 127.0.0.1) and the
	// real resolver, without a network.
	g := New(Options{Resolver: noNetworkResolver(&asked), Recorder: reports})
	defer g.Close()

	for _, p := range []*Policy{mustPolicy(t, DefaultSettings()), mustPolicy(t, DefaultSettings(), "status.example.com")} {
		g.SetPolicy(p)
		_, err := g.Get(context.Background(), target)
		ref, ok := AsRefusal(err)
		if !ok || ref.Reason != ReasonInternalName {
			t.Fatalf("without an entry: %v, want an internal_name refusal", err)
		}
		want := "localhost:" + strconv.Itoa(port)
		if ref.Remedy.Kind != RemedyAddEntry || ref.Remedy.Entry != want {
			t.Fatalf("remedy %+v, want add_entry %s", ref.Remedy, want)
		}
		if served.Load() != 0 || asked.Load() != 0 {
			t.Fatalf("a refused localhost reached the server (%d) or DNS (%d)", served.Load(), asked.Load())
		}

		// Do exactly what the fix says.
		e, err := ParseEntry(ref.Remedy.Entry)
		if err != nil {
			t.Fatalf("the suggested entry %q does not parse: %v", ref.Remedy.Entry, err)
		}
		fixed, err := NewPolicy(append(p.Allowlist().Entries(), e), DefaultSettings())
		if err != nil {
			t.Fatal(err)
		}
		g.SetPolicy(fixed)
		resp, err := g.Get(context.Background(), target)
		if err != nil {
			t.Fatalf("after adding %s as suggested: %v", e, err)
		}
		body, err := resp.ReadAll()
		if err != nil || string(body) != "local service" {
			t.Fatalf("got %q, %v", body, err)
		}
		if asked.Load() != 0 {
			t.Fatalf("%d DNS queries for localhost", asked.Load())
		}
		served.Store(0)
	}
}
