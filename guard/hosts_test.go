package guard

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseHostsReadsNamesAsTheSystemDoes(t *testing.T) {
	table := parseHosts([]byte(`# comment line
127.0.0.1	localhost
::1		localhost ip6-localhost	# trailing comment
10.0.0.5 DB.Corp.Example. db
10.0.0.6 db.corp.example
10.0.0.5 db.corp.example
fe80::1%eth0 router.lan
::ffff:10.0.0.7 mapped.example
not-an-address bad.example
10.0.0.8
`))
	tests := []struct {
		name string
		want []netip.Addr
	}{
		{"localhost", addrs("127.0.0.1", "::1")},
		{"ip6-localhost", addrs("::1")},
		{"db.corp.example", addrs("10.0.0.5", "10.0.0.6")}, // every line, once each, in order
		{"db", addrs("10.0.0.5")},
		{"router.lan", addrs("fe80::1")}, // zone dropped
		{"mapped.example", addrs("10.0.0.7")},
		{"bad.example", nil},
		{"comment", nil},
	}
	for _, tt := range tests {
		if got := table[tt.name]; !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// dnsRecorder stands for DNS behind the hosts file: it records the exact
// names it is asked for and answers a public address.
type dnsRecorder struct{ rawResolver }

func writeHosts(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSystemResolverAsksHostsFileBeforeDNS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	writeHosts(t, path, "127.0.0.1 localhost\n10.1.2.3 wiki.corp.example\n::1 buildbox\n")
	dns := &dnsRecorder{}
	s := &systemResolver{hosts: &hostsFile{path: path}, dns: dns}
	ctx := context.Background()

	for _, tt := range []struct {
		host    string
		network string
		want    []netip.Addr
	}{
		{"wiki.corp.example.", "ip", addrs("10.1.2.3")},
		{"WIKI.corp.example.", "ip", addrs("10.1.2.3")},
		{"buildbox.", "ip", addrs("::1")},
		{"buildbox.", "ip6", addrs("::1")},
	} {
		got, err := s.LookupNetIP(ctx, tt.network, tt.host)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s (%s): %v, %v; want %v", tt.host, tt.network, got, err, tt.want)
		}
	}
	if len(dns.names) != 0 {
		t.Fatalf("DNS was asked for %q, names the hosts file answers", dns.names)
	}

	// A name the file does not list, or lists for another family, goes to
	// DNS as the absolute name it was given: no search list applies.
	for _, q := range [][2]string{{"status.example.com.", "ip"}, {"buildbox.", "ip4"}} {
		if _, err := s.LookupNetIP(ctx, q[1], q[0]); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"status.example.com.", "buildbox."}; !slices.Equal(dns.names, want) {
		t.Fatalf("DNS was asked for %q, want %q", dns.names, want)
	}
}

func TestSystemResolverSeesHostsFileEditsAndRemoval(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	writeHosts(t, path, "10.1.2.3 wiki.corp.example\n")
	dns := &dnsRecorder{}
	s := &systemResolver{hosts: &hostsFile{path: path}, dns: dns}
	ctx := context.Background()
	lookup := func() []netip.Addr {
		t.Helper()
		got, err := s.LookupNetIP(ctx, "ip", "wiki.corp.example.")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := lookup(); !slices.Equal(got, addrs("10.1.2.3")) {
		t.Fatalf("first read: %v", got)
	}
	// The same size on purpose: the modification time alone must count.
	writeHosts(t, path, "10.1.2.4 wiki.corp.example\n")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if got := lookup(); !slices.Equal(got, addrs("10.1.2.4")) {
		t.Fatalf("after an edit: %v, want the new address", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := lookup(); !slices.Equal(got, addrs("93.184.216.34")) || !slices.Equal(dns.names, []string{"wiki.corp.example."}) {
		t.Fatalf("after removal: %v from DNS asked %q; want DNS's answer", got, dns.names)
	}
}

func TestGuardWithoutResolverReadsSystemHostsFile(t *testing.T) {
	g := New(Options{})
	defer g.Close()
	s, ok := g.Resolver().(*systemResolver)
	if !ok || s.hosts.path != "/etc/hosts" {
		t.Fatalf("the default resolver is %T %+v, want the system resolver on /etc/hosts", g.Resolver(), s)
	}
	// The real /etc/hosts' localhost line parses to loopback. (A localhost
	// name is never looked up there, but the file's own line must read as
	// the system reads it, or no other line can be trusted to.)
	data, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Skipf("no /etc/hosts here: %v", err)
	}
	if !hasHostsName(string(data), "localhost") {
		t.Skip("this /etc/hosts has no localhost line")
	}
	got := s.hosts.lookup("localhost", "ip")
	if len(got) == 0 {
		t.Fatal("the localhost line of /etc/hosts was not read")
	}
	for _, a := range got {
		if !a.IsLoopback() {
			t.Fatalf("localhost in /etc/hosts read as %v", got)
		}
	}
}

// hasHostsName reports, independently of parseHosts, whether a hosts
// file lists name on an uncommented line.
func hasHostsName(text, name string) bool {
	for line := range strings.Lines(text) {
		line, _, _ = strings.Cut(line, "#")
		if f := strings.Fields(line); len(f) > 1 && slices.Contains(f[1:], name) {
			return true
		}
	}
	return false
}
