package guard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The tests in this file run the guard with its real dialer and Control
// hook, against a server on a public-looking address, inside a private
// network namespace made for the test: `unshare -n` gives the child a
// network with nothing but its own loopback interface, so no packet can
// leave the machine whatever the guard does.

const netnsChildEnv = "OUTBOUND_NETNS_CHILD"

// publicInNamespace is a public-looking address the child puts on lo.
const publicInNamespace = "93.184.216.34"

func TestRealDialerInPrivateNamespace(t *testing.T) {
	if os.Getenv(netnsChildEnv) == "1" {
		t.Skip("running as the namespace child")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare is not installed")
	}
	if err := exec.Command(unshare, "-n", "true").Run(); err != nil {
		t.Skipf("unshare -n is not permitted here: %v", err)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the ip command (iproute2) is not installed")
	}
	cmd := exec.Command(unshare, "-n", os.Args[0], "-test.run=^TestNamespaceChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), netnsChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("namespace child:\n%s", out)
	if err != nil {
		t.Fatalf("namespace child failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestNamespaceChild") {
		t.Fatal("the namespace child did not run its checks")
	}
}

// TestNamespaceChild runs only inside the namespace made above.
func TestNamespaceChild(t *testing.T) {
	if os.Getenv(netnsChildEnv) != "1" {
		t.Skip("only runs inside TestRealDialerInPrivateNamespace")
	}
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"addr", "add", publicInNamespace + "/32", "dev", "lo"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	serve := func(addr string) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/to-loopback" {
				http.Redirect(w, r, "http://127.0.0.1/secret", http.StatusFound)
				return
			}
			fmt.Fprintf(w, "served by %s", addr)
		})}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
	}
	serve(publicInNamespace + ":80")
	serve("127.0.0.1:80")

	r := newResolver(
		"public.example.com", []string{publicInNamespace},
		"sneaky.example.com", []string{"127.0.0.1"},
		"intranet.corp", []string{"127.0.0.1"},
	)
	reports := &recordingRecorder{}
	g := New(Options{Resolver: r, Recorder: reports}) // the real dialer, with its Control hook
	defer g.Close()

	resp, err := g.Get(context.Background(), "http://public.example.com/")
	if err != nil {
		t.Fatalf("public host through the real dialer: %v", err)
	}
	body, err := resp.ReadAll()
	if err != nil || string(body) != "served by "+publicInNamespace+":80" {
		t.Fatalf("got %q, %v", body, err)
	}
	for _, u := range []string{"http://sneaky.example.com/", "http://127.0.0.1/", "http://public.example.com/to-loopback"} {
		if _, err := g.Get(context.Background(), u); err == nil {
			t.Fatalf("%s reached loopback", u)
		}
	}
	if n := len(reports.Events()); n != 3 {
		t.Fatalf("%d refusals reported, want 3", n)
	}

	// The Control hook itself: a permit for the public address must not
	// connect anywhere else, even when asked to.
	pm := &permit{host: "public.example.com", port: 80, addrs: []netip.Addr{netip.MustParseAddr(publicInNamespace)}}
	if _, err := g.connect(context.Background(), "tcp", netip.MustParseAddrPort("127.0.0.1:80"), pm); err == nil {
		t.Fatal("the Control hook let a connection to 127.0.0.1:80 through")
	} else if ref, ok := AsRefusal(err); !ok || ref.Reason != ReasonConnectCheck {
		t.Fatalf("want a connect_check refusal from the hook, got %v", err)
	}

	// A literal entry reaches loopback on purpose, through the real dialer.
	p, err := NewPolicy([]Entry{mustEntry(t, "intranet.corp")}, DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	g.SetPolicy(p)
	resp, err = g.Get(context.Background(), "http://intranet.corp/")
	if err != nil {
		t.Fatalf("literal entry to loopback: %v", err)
	}
	if body, err := resp.ReadAll(); err != nil || string(body) != "served by 127.0.0.1:80" {
		t.Fatalf("got %q, %v", body, err)
	}
}
