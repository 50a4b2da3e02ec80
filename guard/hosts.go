package guard

import (
	"context"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// systemHostsFile is the hosts file the system resolver reads first.
const systemHostsFile = "/etc/hosts"

// systemResolver is the guard's resolver when Options.Resolver is nil: the
// hosts file, then DNS through net.DefaultResolver, in the order nearly
// every system configures ("hosts: files dns" in nsswitch.conf).
//
// It reads the hosts file itself, for the name without its trailing dot,
// because the guard asks for absolute names and the system resolvers do
// not match those against the hosts file (see lookup.go). Looking there
// first, rather than asking DNS and falling back to the file on "no such
// host", answers a listed name as the system does even when DNS knows it
// too (an admin who pins a name to a mirror in /etc/hosts gets the
// mirror), sends no query for it, and gives the same answer whichever of
// Go's or the C library's resolver is in use. The hosts file has no search
// list, so reading it cannot rewrite a name; DNS is still asked for the
// absolute name.
//
// Not covered: a system that puts DNS before files, or resolves relative
// names through other sources (mDNS, LDAP); the absolute lookup reaches
// those only where the C library passes it on.
type systemResolver struct {
	hosts *hostsFile
	dns   Resolver
}

func newSystemResolver(hostsPath string) *systemResolver {
	return &systemResolver{hosts: &hostsFile{path: hostsPath}, dns: net.DefaultResolver}
}

// LookupNetIP implements Resolver.
func (s *systemResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if addrs := s.hosts.lookup(strings.ToLower(strings.TrimSuffix(host, ".")), network); len(addrs) > 0 {
		return addrs, nil
	}
	return s.dns.LookupNetIP(ctx, network, host)
}

// hostsFile is a hosts file, parsed when first read and again whenever
// its modification time or size changes, so an admin's edit counts from
// the next lookup without a restart.
type hostsFile struct {
	path  string
	table atomic.Pointer[hostsTable]
	mu    sync.Mutex // serialises re-reading
}

type hostsTable struct {
	mod    time.Time
	size   int64
	byName map[string][]netip.Addr
}

// lookup returns the addresses the file gives name (lower case, no
// trailing dot), of network "ip", "ip4" or "ip6", in the file's order. A
// missing or unreadable file lists nothing, as for the system resolver.
func (h *hostsFile) lookup(name, network string) []netip.Addr {
	t := h.current()
	if t == nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range t.byName[name] {
		if network == "ip4" && !a.Is4() || network == "ip6" && !a.Is6() {
			continue
		}
		out = append(out, a)
	}
	return out
}

// current returns the parsed file, reading it again if it changed.
func (h *hostsFile) current() *hostsTable {
	fi, err := os.Stat(h.path)
	if err != nil {
		return nil
	}
	fresh := func(t *hostsTable) bool { return t != nil && t.mod.Equal(fi.ModTime()) && t.size == fi.Size() }
	if t := h.table.Load(); fresh(t) {
		return t
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.table.Load(); fresh(t) {
		return t
	}
	data, err := os.ReadFile(h.path)
	if err != nil {
		return nil
	}
	t := &hostsTable{mod: fi.ModTime(), size: fi.Size(), byName: parseHosts(data)}
	h.table.Store(t)
	return t
}

// parseHosts reads hosts(5) lines: an address, then its names, with "#"
// starting a comment. Names are matched without case and without a
// trailing dot; a name on several lines has all their addresses, as with
// the system resolvers. A line whose address does not parse is skipped.
// An IPv6 zone is dropped: the guard never dials a zone, and the address
// is link-local, which a host name never reaches anyway.
func parseHosts(data []byte) map[string][]netip.Addr {
	byName := map[string][]netip.Addr{}
	for line := range strings.Lines(string(data)) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		a = a.WithZone("").Unmap()
		for _, name := range f[1:] {
			name = strings.ToLower(strings.TrimSuffix(name, "."))
			if name == "" || slices.Contains(byName[name], a) {
				continue
			}
			byName[name] = append(byName[name], a)
		}
	}
	return byName
}
