package guard

import "net/netip"

// AddrKind says why an address is or is not reachable. The kind, not the
// exact range, decides which allowlist entry can unlock an address: a
// literal host entry unlocks loopback, private and CGNAT addresses; only a
// literal IP entry unlocks link-local addresses and metadata endpoints;
// nothing unlocks the special-purpose kind.
type AddrKind uint8

const (
	// KindInvalid is the zero value: the address was not classified.
	KindInvalid AddrKind = iota
	// KindPublic is a globally routable unicast address.
	KindPublic
	// KindLoopback is 127.0.0.0/8 or ::1.
	KindLoopback
	// KindPrivate is RFC 1918 space or IPv6 unique local space (fc00::/7).
	KindPrivate
	// KindCGNAT is the shared address space 100.64.0.0/10.
	KindCGNAT
	// KindLinkLocal is 169.254.0.0/16 or fe80::/10.
	KindLinkLocal
	// KindMetadata is a cloud metadata endpoint.
	KindMetadata
	// KindSpecial is every other special-purpose block: documentation,
	// benchmarking, multicast, reserved, unspecified, translation forms,
	// and addresses with a zone. Nothing unlocks it.
	KindSpecial
)

var kindNames = [...]string{
	KindInvalid:   "invalid",
	KindPublic:    "public",
	KindLoopback:  "loopback",
	KindPrivate:   "private",
	KindCGNAT:     "cgnat",
	KindLinkLocal: "link-local",
	KindMetadata:  "metadata",
	KindSpecial:   "special",
}

func (k AddrKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// AddrClass is the classification of one address: its kind and, when it is
// not public, the name of the range that refuses it.
type AddrClass struct {
	Kind  AddrKind
	Range string
}

// Public reports whether the address may be reached without an allowlist
// entry that unlocks it.
func (c AddrClass) Public() bool { return c.Kind == KindPublic }

// ClassifyAddr classifies an address for outbound use.
//
// An IPv4-mapped IPv6 address is classified by the IPv4 address it
// carries when that address is internal, so that [::ffff:127.0.0.1] is
// reported as loopback; a mapped public address is still refused, because
// the only honest way to name an IPv4 host is its IPv4 form.
func ClassifyAddr(a netip.Addr) AddrClass {
	if !a.IsValid() {
		return AddrClass{KindInvalid, "invalid address"}
	}
	if a.Zone() != "" {
		return AddrClass{KindSpecial, "scoped address with a zone"}
	}
	if a.Is4In6() {
		if inner := classifyV4(a.Unmap()); !inner.Public() {
			return inner
		}
		return AddrClass{KindSpecial, "IPv4-mapped range ::ffff:0:0/96"}
	}
	if a.Is4() {
		return classifyV4(a)
	}
	return classifyV6(a)
}

// classifyDialed classifies an address that the system produced rather
// than a person typed: resolver answers and the sockaddr being connected.
// Go's resolver may return IPv4 answers in mapped form, which must be
// judged as the IPv4 address the kernel will actually connect to.
func classifyDialed(a netip.Addr) (netip.Addr, AddrClass) {
	if a.Is4In6() {
		a = a.Unmap()
	}
	return a, ClassifyAddr(a)
}

func classifyV4(a netip.Addr) AddrClass {
	if name, ok := metadataAddrs[a]; ok {
		return AddrClass{KindMetadata, name}
	}
	for i := range refusedV4 {
		if refusedV4[i].prefix.Contains(a) {
			return AddrClass{refusedV4[i].kind, refusedV4[i].name}
		}
	}
	return AddrClass{Kind: KindPublic}
}

func classifyV6(a netip.Addr) AddrClass {
	if name, ok := metadataAddrs[a]; ok {
		return AddrClass{KindMetadata, name}
	}
	if globalUnicastV6.Contains(a) {
		for i := range refusedInsideV6 {
			if refusedInsideV6[i].prefix.Contains(a) {
				return AddrClass{refusedInsideV6[i].kind, refusedInsideV6[i].name}
			}
		}
		return AddrClass{Kind: KindPublic}
	}
	for i := range outsideV6 {
		if outsideV6[i].prefix.Contains(a) {
			return AddrClass{outsideV6[i].kind, outsideV6[i].name}
		}
	}
	return AddrClass{KindSpecial, outsideV6Name}
}
