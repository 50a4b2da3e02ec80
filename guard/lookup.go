package guard

import (
	"context"
	"net/netip"
	"strings"
)

// How the guard turns a host name into addresses, and why this way:
//
//   - A localhost name (localhost itself, or a name under .localhost) is
//     the loopback addresses, 127.0.0.1 and ::1, and is asked of nobody.
//     RFC 6761 (section 6.3) tells resolver libraries to do exactly that,
//     and it is deterministic: no hosts file, DNS server or search list
//     can point it anywhere else. The policy is not changed by it: a
//     localhost name is an internal name, refused before any lookup unless
//     a literal entry names it, and its loopback addresses are refused
//     again at connect time unless that entry unlocks them.
//   - Every other name is handed to the Resolver as an absolute name (with
//     its trailing dot), so that a resolver's search list cannot turn an
//     outside name into an inside one, e.g. status.example.com into
//     status.example.com.corp.local.
//
// The absolute name has a cost with the system resolver: neither Go's nor
// the C library's resolver finds "localhost." or "buildbox." in the hosts
// file (which lists them without the dot), and the C library finds no
// "db.corp.example." there either. So the guard's default resolver
// (systemResolver, in hosts.go) reads the hosts file itself before it asks
// DNS for the absolute name.

// loopbackAddrs are what a localhost name resolves to: IPv4 first, as
// most local services listen there; the dialer tries the next address
// when a connection fails.
var loopbackAddrs = [...]netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}

// isLocalhostName reports whether a normalised name (lower case, no
// trailing dot) is a localhost name in the sense of RFC 6761.
func isLocalhostName(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// lookupHost resolves a normalised host name for a decision.
func lookupHost(ctx context.Context, r Resolver, name string) ([]netip.Addr, error) {
	if isLocalhostName(name) {
		return append([]netip.Addr(nil), loopbackAddrs[:]...), nil
	}
	return r.LookupNetIP(ctx, "ip", name+".")
}
