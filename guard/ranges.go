package guard

import "net/netip"

// The address tables below are the guard's policy kept as data, so that a
// reviewer can read them against their source and a test can walk every row.
//
// Sources, checked on 2026-11-30:
//   - IANA IPv4 Special-Purpose Address Registry (RFC 6890 and updates),
//     https://www.iana.org/assignments/iana-ipv4-special-registry/
//   - IANA IPv6 Special-Purpose Address Registry,
//     https://www.iana.org/assignments/iana-ipv6-special-registry/
//   - RFC 1112 and RFC 5771 (IPv4 multicast, 224.0.0.0/4), RFC 1112 §4
//     (240.0.0.0/4 reserved, including the broadcast address), RFC 4291
//     (IPv6 addressing: 2000::/3 is the only block allocated as global unicast).
//   - The cloud providers' metadata documentation (AWS IMDS and ECS, GCP,
//     Azure IMDS and WireServer, Alibaba Cloud, Oracle Cloud).

// addrRange is one row of a table: a prefix, the name a person reads in a
// refusal, and the kind that decides which allowlist entry may unlock it.
type addrRange struct {
	prefix netip.Prefix
	name   string
	kind   AddrKind
}

func row(prefix, name string, kind AddrKind) addrRange {
	return addrRange{netip.MustParsePrefix(prefix), name, kind}
}

// refusedV4 lists every IPv4 block that is not publicly routable. The
// order matters only for naming: the first row that contains an address
// names it.
var refusedV4 = []addrRange{
	row("0.0.0.0/8", "this-network range 0.0.0.0/8", KindSpecial),
	row("10.0.0.0/8", "private-use range 10.0.0.0/8", KindPrivate),
	row("100.64.0.0/10", "shared (CGNAT) range 100.64.0.0/10", KindCGNAT),
	row("127.0.0.0/8", "loopback range 127.0.0.0/8", KindLoopback),
	row("169.254.0.0/16", "link-local range 169.254.0.0/16", KindLinkLocal),
	row("172.16.0.0/12", "private-use range 172.16.0.0/12", KindPrivate),
	row("192.0.0.0/24", "IETF protocol assignments range 192.0.0.0/24", KindSpecial),
	row("192.0.2.0/24", "documentation range 192.0.2.0/24 (TEST-NET-1)", KindSpecial),
	row("192.31.196.0/24", "AS112 range 192.31.196.0/24", KindSpecial),
	row("192.52.193.0/24", "AMT range 192.52.193.0/24", KindSpecial),
	row("192.88.99.0/24", "deprecated 6to4 relay range 192.88.99.0/24", KindSpecial),
	row("192.168.0.0/16", "private-use range 192.168.0.0/16", KindPrivate),
	row("192.175.48.0/24", "AS112 direct delegation range 192.175.48.0/24", KindSpecial),
	row("198.18.0.0/15", "benchmarking range 198.18.0.0/15", KindSpecial),
	row("198.51.100.0/24", "documentation range 198.51.100.0/24 (TEST-NET-2)", KindSpecial),
	row("203.0.113.0/24", "documentation range 203.0.113.0/24 (TEST-NET-3)", KindSpecial),
	row("224.0.0.0/4", "multicast range 224.0.0.0/4", KindSpecial),
	row("240.0.0.0/4", "reserved range 240.0.0.0/4 (including broadcast)", KindSpecial),
}

// globalUnicastV6 is the only IPv6 block allocated for global unicast. An
// address outside it is refused; the rows of outsideV6 only give the most
// common of those a precise name.
var globalUnicastV6 = netip.MustParsePrefix("2000::/3")

// refusedInsideV6 are the special-purpose blocks inside 2000::/3.
var refusedInsideV6 = []addrRange{
	row("2001:db8::/32", "documentation range 2001:db8::/32", KindSpecial),
	row("2001::/23", "IETF protocol assignments range 2001::/23 (Teredo, benchmarking)", KindSpecial),
	row("2002::/16", "6to4 range 2002::/16", KindSpecial),
	row("2620:4f:8000::/48", "AS112 direct delegation range 2620:4f:8000::/48", KindSpecial),
	row("3fff::/20", "documentation range 3fff::/20", KindSpecial),
}

// outsideV6 names well-known blocks outside 2000::/3. Every other address
// outside 2000::/3 is refused too, under outsideV6Name.
var outsideV6 = []addrRange{
	row("::1/128", "IPv6 loopback range ::1/128", KindLoopback),
	row("::/128", "unspecified range ::/128", KindSpecial),
	row("::ffff:0:0/96", "IPv4-mapped range ::ffff:0:0/96", KindSpecial),
	row("::ffff:0:0:0/96", "IPv4-translated range ::ffff:0:0:0/96", KindSpecial),
	row("::/96", "IPv4-compatible range ::/96", KindSpecial),
	row("64:ff9b::/96", "NAT64 range 64:ff9b::/96", KindSpecial),
	row("64:ff9b:1::/48", "local-use NAT64 range 64:ff9b:1::/48", KindSpecial),
	row("100::/64", "discard-only range 100::/64", KindSpecial),
	row("5f00::/16", "SRv6 SID range 5f00::/16", KindSpecial),
	row("fc00::/7", "unique local range fc00::/7", KindPrivate),
	row("fe80::/10", "link-local range fe80::/10", KindLinkLocal),
	row("fec0::/10", "deprecated site-local range fec0::/10", KindSpecial),
	row("ff00::/8", "multicast range ff00::/8", KindSpecial),
}

const outsideV6Name = "IPv6 space outside global unicast 2000::/3"

// metadataAddrs are cloud metadata endpoints. They are refused by address
// even where no range covers them (Azure's WireServer is a public address),
// because they hand out credentials to whoever asks from inside the host.
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "cloud metadata endpoint (AWS, GCP, Azure, OpenStack)",
	netip.MustParseAddr("169.254.170.2"):   "cloud metadata endpoint (AWS ECS task credentials)",
	netip.MustParseAddr("fd00:ec2::254"):   "cloud metadata endpoint (AWS IMDS over IPv6)",
	netip.MustParseAddr("100.100.100.200"): "cloud metadata endpoint (Alibaba Cloud)",
	netip.MustParseAddr("192.0.0.192"):     "cloud metadata endpoint (Oracle Cloud)",
	netip.MustParseAddr("168.63.129.16"):   "cloud metadata endpoint (Azure WireServer)",
}
