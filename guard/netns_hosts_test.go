package guard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// The test in this file runs the guard exactly as the product builds it
// (no injected resolver: the system's, and the system's /etc/hosts) in a
// private network and mount namespace: `unshare -n -m` gives the child a
// network with only its own loopback, so no DNS query can leave the
// machine, and lets it bind-mount a hosts file of the test's over
// /etc/hosts without touching the real one. It runs the child twice, with
// Go's own resolver and with the C library's (cgo), which treat absolute
// names and the hosts file differently.

const hostsChildEnv = "OUTBOUND_HOSTS_NETNS_CHILD"
const hostsFileEnv = "OUTBOUND_HOSTS_NETNS_FILE"

// namespaceHosts is the hosts file the child sees as /etc/hosts.
const namespaceHosts = `# a hosts file as an admin writes one
127.0.0.1	localhost
::1	localhost ip6-localhost
127.0.0.1	db.corp.example db   # a dotted name and a short one
127.0.0.1	buildbox
`

func TestLocalhostAndHostsFileWithSystemResolverInPrivateNamespace(t *testing.T) {
	if os.Getenv(hostsChildEnv) != "" {
		t.Skip("running as the namespace child")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare is not installed")
	}
	if err := exec.Command(unshare, "-n", "-m", "true").Run(); err != nil {
		t.Skipf("unshare -n -m is not permitted here: %v", err)
	}
	for _, tool := range []string{"ip", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte(namespaceHosts), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"go", "cgo"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(unshare, "-n", "-m", os.Args[0], "-test.run=^TestHostsNamespaceChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), hostsChildEnv+"=1", hostsFileEnv+"="+hosts, "GODEBUG=netdns="+mode)
			out, err := cmd.CombinedOutput()
			t.Logf("namespace child (netdns=%s):\n%s", mode, out)
			if err != nil {
				t.Fatalf("namespace child failed: %v", err)
			}
			if !strings.Contains(string(out), "--- PASS: TestHostsNamespaceChild") {
				t.Fatal("the namespace child did not run its checks")
			}
		})
	}
}

// TestHostsNamespaceChild runs only inside the namespace made above.
func TestHostsNamespaceChild(t *testing.T) {
	if os.Getenv(hostsChildEnv) != "1" {
		t.Skip("only runs inside TestLocalhostAndHostsFileWithSystemResolverInPrivateNamespace")
	}
	for _, args := range [][]string{{"ip", "link", "set", "lo", "up"}, {"mount", "--bind", os.Getenv(hostsFileEnv), "/etc/hosts"}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	var served atomic.Int32
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		fmt.Fprintf(w, "served to %s", r.Host)
	})}
	go srv.Serve(l)
	defer srv.Close()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	ctx := context.Background()

	// As the product builds it: no resolver, no dialer injected.
	g := New(Options{})
	defer g.Close()
	get := func(host string) (string, error) {
		resp, err := g.Get(ctx, "http://"+host+":"+port+"/")
		if err != nil {
			return "", err
		}
		body, err := resp.ReadAll()
		return string(body), err
	}

	// Without an entry localhost stays refused, before any dial.
	dialer := guardtest.NewDialer()
	recorded := New(Options{Dial: dialer.Dial})
	defer recorded.Close()
	for _, p := range []*Policy{mustPolicy(t, DefaultSettings()), mustPolicy(t, DefaultSettings(), "status.example.com")} {
		recorded.SetPolicy(p)
		g.SetPolicy(p)
		for _, gg := range []*Guard{recorded, g} {
			_, err := gg.Get(ctx, "http://localhost:"+port+"/")
			if ref, ok := AsRefusal(err); !ok || ref.Reason != ReasonInternalName || ref.Remedy.Entry != "localhost:"+port {
				t.Fatalf("localhost without an entry: %v, want internal_name with the fix localhost:%s", err, port)
			}
		}
	}
	if d := dialer.Dials(); len(d) != 0 || served.Load() != 0 {
		t.Fatalf("a refused localhost was dialled (%v) or served (%d)", d, served.Load())
	}

	// Literal entries reach the server: localhost by RFC 6761, the
	// others through the hosts file, dotted or not.
	g.SetPolicy(mustPolicy(t, DefaultSettings(), "localhost:"+port, "db.corp.example:"+port, "buildbox:"+port, "db:"+port))
	for _, host := range []string{"localhost", "db.corp.example", "buildbox", "db", "DB.Corp.Example."} {
		body, err := get(host)
		if err != nil {
			t.Errorf("%s with a literal entry: %v", host, err)
			continue
		}
		if !strings.HasPrefix(body, "served to ") {
			t.Errorf("%s: got %q", host, body)
		}
	}

	// The hosts file changes how a name resolves, not the policy: a
	// wildcard still never unlocks the loopback address it names.
	g.SetPolicy(mustPolicy(t, DefaultSettings(), "*.corp.example:"+port))
	before := served.Load()
	_, err = get("db.corp.example")
	if ref, ok := AsRefusal(err); !ok || ref.Reason != ReasonInternalAddress {
		t.Fatalf("db.corp.example under a wildcard: %v, want internal_address", err)
	}
	if served.Load() != before {
		t.Fatal("a refused name was served")
	}
}
