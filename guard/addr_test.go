package guard

import (
	"net/netip"
	"testing"
)

// lastAddr returns the highest address of a prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().AsSlice()
	bits := p.Bits()
	for i := range a {
		for b := 0; b < 8; b++ {
			if i*8+b >= bits {
				a[i] |= 0x80 >> b
			}
		}
	}
	out, _ := netip.AddrFromSlice(a)
	return out
}

// TestEveryTableRowRefuses walks every row of the address tables: the
// first and the last address of each block are refused, with the row's
// own name unless a more specific row or a metadata endpoint names it.
func TestEveryTableRowRefuses(t *testing.T) {
	tables := map[string][]addrRange{"refusedV4": refusedV4, "refusedInsideV6": refusedInsideV6, "outsideV6": outsideV6}
	for table, rows := range tables {
		for _, r := range rows {
			for _, a := range []netip.Addr{r.prefix.Masked().Addr(), lastAddr(r.prefix)} {
				t.Run(table+"/"+a.String(), func(t *testing.T) {
					c := ClassifyAddr(a)
					if c.Public() {
						t.Fatalf("ClassifyAddr(%s) is public; the row %s should refuse it", a, r.prefix)
					}
					if c.Range == "" {
						t.Fatalf("ClassifyAddr(%s) refused without naming a range", a)
					}
					want := r.name
					if name, ok := metadataAddrs[a]; ok {
						want = name
					} else if a.Is4In6() && !ClassifyAddr(a.Unmap()).Public() {
						want = ClassifyAddr(a.Unmap()).Range // mapped internal: named by the IPv4 inside
					} else {
						for _, earlier := range rows { // the first row that contains a names it
							if earlier.prefix.Contains(a) {
								want = earlier.name
								break
							}
						}
					}
					if c.Range != want {
						t.Errorf("ClassifyAddr(%s) = %q, want %q", a, c.Range, want)
					}
				})
			}
		}
	}
}

func TestEveryMetadataEndpointRefuses(t *testing.T) {
	for a, name := range metadataAddrs {
		t.Run(a.String(), func(t *testing.T) {
			if c := ClassifyAddr(a); c.Kind != KindMetadata || c.Range != name {
				t.Fatalf("ClassifyAddr(%s) = %+v, want metadata %q", a, c, name)
			}
		})
	}
}

func TestClassifyAddr(t *testing.T) {
	tests := []struct {
		addr string
		kind AddrKind
	}{
		{"8.8.8.8", KindPublic},
		{"93.184.216.34", KindPublic},
		{"1.1.1.1", KindPublic},
		{"2606:4700:4700::1111", KindPublic},
		{"2a00:1450:4001:80b::200e", KindPublic},
		{"127.0.0.1", KindLoopback},
		{"127.255.255.254", KindLoopback},
		{"::1", KindLoopback},
		{"10.0.0.5", KindPrivate},
		{"172.16.0.1", KindPrivate},
		{"172.31.255.255", KindPrivate},
		{"172.32.0.1", KindPublic},
		{"192.168.1.1", KindPrivate},
		{"fd00::5", KindPrivate},
		{"100.64.0.1", KindCGNAT},
		{"100.127.255.255", KindCGNAT},
		{"100.128.0.1", KindPublic},
		{"169.254.1.1", KindLinkLocal},
		{"fe80::1", KindLinkLocal},
		{"169.254.169.254", KindMetadata},
		{"168.63.129.16", KindMetadata},
		{"fd00:ec2::254", KindMetadata},
		{"0.0.0.0", KindSpecial},
		{"255.255.255.255", KindSpecial},
		{"224.0.0.1", KindSpecial},
		{"::", KindSpecial},
		{"::ffff:127.0.0.1", KindLoopback}, // mapped: named by the IPv4 inside
		{"::ffff:10.0.0.1", KindPrivate},
		{"::ffff:8.8.8.8", KindSpecial}, // mapped public: still refused
		{"::127.0.0.1", KindSpecial},    // IPv4-compatible
		{"::ffff:0:7f00:1", KindSpecial},
		{"64:ff9b::7f00:1", KindSpecial},
		{"64:ff9b:1::1", KindSpecial},
		{"100::1", KindSpecial},
		{"5f00::1", KindSpecial},
		{"fec0::1", KindSpecial},
		{"ff02::1", KindSpecial},
		{"2001:db8::1", KindSpecial},
		{"2001::1", KindSpecial},
		{"2002:7f00:1::", KindSpecial},
		{"3fff::1", KindSpecial},
		{"2620:4f:8000::1", KindSpecial},
		{"4000::1", KindSpecial}, // outside 2000::/3
		{"fe80::1%eth0", KindSpecial},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			c := ClassifyAddr(netip.MustParseAddr(tt.addr))
			if c.Kind != tt.kind {
				t.Fatalf("ClassifyAddr(%s) = %s (%q), want %s", tt.addr, c.Kind, c.Range, tt.kind)
			}
			if (c.Kind == KindPublic) != (c.Range == "") {
				t.Fatalf("ClassifyAddr(%s): kind %s with range %q", tt.addr, c.Kind, c.Range)
			}
		})
	}
	if c := ClassifyAddr(netip.Addr{}); c.Kind != KindInvalid {
		t.Fatalf("zero Addr classified as %s", c.Kind)
	}
}

func TestClassifyDialedUnmapsResolverAnswers(t *testing.T) {
	a, c := classifyDialed(netip.MustParseAddr("::ffff:93.184.216.34"))
	if !a.Is4() || !c.Public() {
		t.Fatalf("a mapped public answer should be judged as IPv4 public, got %s %s", a, c.Kind)
	}
}
