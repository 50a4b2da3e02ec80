package guard

import (
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// host is a URL host or allowlist host after normalisation: exactly one of
// name and ip is set.
type host struct {
	name string // lower-case ASCII (punycode) DNS name without a trailing dot
	ip   netip.Addr
	text string // the canonical text of the host: name, or the address
}

// hostProblem is why a host string was rejected. The caller turns it into
// a URL refusal or an allowlist entry error, with wording for each.
type hostProblem uint8

const (
	hostOK hostProblem = iota
	hostEmpty
	hostBadName
	hostNumeric
	hostZone
)

const maxNameLen = 253

// parseHost normalises a host as it appears in a URL or an allowlist entry,
// without brackets or port. It lower-cases, maps Unicode through IDNA to
// punycode, drops one trailing dot, and refuses numeric forms other than a
// canonical dotted quad: "2130706433", "0x7f000001", "0177.0.0.1" and
// "127.1" are all 127.0.0.1 to glibc, so they must never reach a resolver.
//
// The common case, an ASCII name already in lower case, does not allocate.
func parseHost(raw string) (host, hostProblem) {
	if raw == "" {
		return host{}, hostEmpty
	}
	if strings.IndexByte(raw, ':') >= 0 {
		ip, err := netip.ParseAddr(raw)
		if err != nil {
			return host{}, hostBadName
		}
		if ip.Zone() != "" {
			return host{}, hostZone
		}
		return host{ip: ip, text: ip.String()}, hostOK
	}
	name, ok := asciiLower(raw)
	if !ok {
		if !utf8.ValidString(raw) {
			return host{}, hostBadName
		}
		mapped, err := idna.Lookup.ToASCII(raw)
		if err != nil {
			return host{}, hostBadName
		}
		// The mapping must be stable: a name that maps to punycode which
		// does not map to itself again would print as something that
		// cannot be parsed back.
		if again, err := idna.Lookup.ToASCII(mapped); err != nil || again != mapped {
			return host{}, hostBadName
		}
		name = mapped
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return host{}, hostEmpty
	}
	if endsInNumber(name) {
		ip, err := netip.ParseAddr(name)
		if err != nil || !ip.Is4() {
			return host{}, hostNumeric
		}
		return host{ip: ip, text: name}, hostOK // strict parsing made name canonical
	}
	if !validDNSName(name) {
		return host{}, hostBadName
	}
	return host{name: name, text: name}, hostOK
}

// asciiLower returns s in lower case when s is plain ASCII letters, digits,
// hyphens and dots, and reports false when IDNA has to map it (Unicode,
// punycode labels, anything unusual). It allocates only for upper case.
func asciiLower(s string) (string, bool) {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.':
		case 'A' <= c && c <= 'Z':
			upper = true
		default:
			return "", false
		}
	}
	if strings.Contains(s, "xn--") || strings.Contains(s, "XN--") || strings.Contains(s, "Xn--") || strings.Contains(s, "xN--") {
		return "", false // let IDNA validate punycode labels
	}
	if upper {
		return strings.ToLower(s), true
	}
	return s, true
}

// endsInNumber follows the WHATWG URL standard: a host whose last label is
// a number (decimal, or 0x hexadecimal) is an IPv4 address in some form,
// and we accept only the canonical one.
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for i := 2; i < len(last); i++ {
			if !isHex(last[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validDNSName checks an ASCII name against the host-name rules of
// RFC 1123: labels of 1 to 63 letters, digits and inner hyphens, 253
// characters in all.
func validDNSName(name string) bool {
	if len(name) > maxNameLen {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
