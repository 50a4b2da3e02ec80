package guard

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/publicsuffix"
)

// Entry is one allowlist entry, as an admin typed it and after
// normalisation. The grammar:
//
//	status.example.com     that host, on the allowed ports
//	*.docs.example.com     docs.example.com and every name under it
//	intranet.corp:8080     that host, on port 8080 only
//	10.1.2.3               that address
//	[fd00::5]:8443         that address, on port 8443 only
//
// A literal entry (no wildcard) is a deliberate choice of one host, so it
// may reach a loopback, private, CGNAT or unique-local address. A wildcard
// covers names nobody has looked at, so it never unlocks those.
type Entry struct {
	name     string     // normalised DNS name; "" for an IP entry
	ip       netip.Addr // the address of an IP entry
	port     uint16     // 0: the allowed ports
	wildcard bool
}

// Wildcard reports whether the entry is of the form *.domain.
func (e Entry) Wildcard() bool { return e.wildcard }

// Port returns the pinned port, or 0 when the entry allows the policy's
// ports.
func (e Entry) Port() uint16 { return e.port }

// IP returns the address of an IP entry, or the zero Addr.
func (e Entry) IP() netip.Addr { return e.ip }

// IsZero reports whether e is the zero Entry (no entry).
func (e Entry) IsZero() bool { return e.name == "" && !e.ip.IsValid() }

// Host returns the entry's host: the domain of a wildcard without "*.",
// the name of a literal entry, or the address of an IP entry.
func (e Entry) Host() string {
	if e.ip.IsValid() {
		return e.ip.String()
	}
	return e.name
}

// String returns the canonical text of the entry, which ParseEntry accepts
// and returns unchanged.
func (e Entry) String() string {
	if e.IsZero() {
		return ""
	}
	if !e.wildcard && e.port == 0 {
		return e.Host()
	}
	var b strings.Builder
	if e.wildcard {
		b.WriteString("*.")
	}
	if e.ip.Is6() && e.port != 0 {
		b.WriteString("[" + e.ip.String() + "]")
	} else {
		b.WriteString(e.Host())
	}
	if e.port != 0 {
		b.WriteString(":" + strconv.Itoa(int(e.port)))
	}
	return b.String()
}

// MarshalText makes an Entry print as its canonical text in JSON.
func (e Entry) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// EntryError is a rejected allowlist entry: the input, what is wrong with
// it, and how to write it instead.
type EntryError struct {
	Line    int // 1-based line in a multi-line input; 0 for a single entry
	Input   string
	Problem string
	Fix     string
}

func (e *EntryError) Error() string {
	where := "allowlist entry "
	if e.Line > 0 {
		where = "line " + strconv.Itoa(e.Line) + ": allowlist entry "
	}
	return where + strconv.Quote(e.Input) + ": " + e.Problem + "; " + e.Fix
}

const maxEntryLen = 253 + len("*.") + len(":65535")

// ParseEntry parses and normalises one allowlist entry. The error is an
// *EntryError that names the problem and the fix.
func ParseEntry(s string) (Entry, error) {
	bad := func(problem, fix string) (Entry, error) {
		return Entry{}, &EntryError{Input: s, Problem: problem, Fix: fix}
	}
	switch {
	case s == "":
		return bad("the entry is empty", "type a host such as status.example.com")
	case len(s) > maxEntryLen:
		return bad("the entry is "+strconv.Itoa(len(s))+" characters long, over the 253 a host name may have", "shorten it to the host name itself")
	case strings.IndexFunc(s, unicode.IsSpace) >= 0:
		return bad("the entry contains whitespace", "write one host per line, without spaces")
	case strings.Contains(s, "://"):
		return bad("the entry has a scheme", "write only the host, e.g. "+strconv.Quote(hostOfURL(s))+" instead of "+strconv.Quote(s))
	case isCIDR(s):
		return bad("the entry is an address range ("+s+")", "list each address the agent needs, e.g. "+cidrExample(s)+"; ranges are not supported, because a range usually covers far more than was meant")
	case strings.ContainsAny(s, "/?#"):
		return bad("the entry has a path", "write only the host, e.g. "+strconv.Quote(hostOfURL(s))+"; the allowlist works per host, not per page")
	case strings.Contains(s, "@"):
		return bad("the entry has a user name (@)", "write only the host, without user@")
	case s == "*" || s == "*.":
		return bad("a bare * would allow every host", "leave the list empty for PUBLIC WEB, or write a domain such as *.example.com")
	}
	e := Entry{}
	rest := s
	if strings.HasPrefix(rest, "*.") {
		e.wildcard = true
		rest = rest[2:]
	}
	if strings.Contains(rest, "*") {
		return bad("a * may only stand at the start of the entry", "write *.example.com to allow example.com and every name under it")
	}
	hostPart, portPart, hasPort, perr := splitEntryPort(rest)
	if perr != "" {
		return bad(perr, "write the port after a colon, e.g. intranet.corp:8080 or [fd00::5]:8443")
	}
	if len(hostPart) > maxNameLen {
		return bad("the host is "+strconv.Itoa(len(hostPart))+" characters long, over the 253 a host name may have", "shorten it to the host name itself")
	}
	if hasPort {
		n, err := strconv.Atoi(portPart)
		if err != nil || portPart == "" || portPart[0] == '+' || portPart[0] == '-' {
			return bad("the port "+strconv.Quote(portPart)+" is not a number", "write a port from 1 to 65535, e.g. intranet.corp:8080")
		}
		if n < 1 || n > 65535 {
			return bad("the port "+portPart+" is outside 1–65535", "write a port from 1 to 65535, or leave it out to allow ports 80 and 443")
		}
		e.port = uint16(n)
	}
	h, problem := parseHost(hostPart)
	switch problem {
	case hostEmpty:
		return bad("the entry has no host", "type a host such as status.example.com")
	case hostZone:
		return bad("the address has a zone (%)", "write the address without its zone")
	case hostNumeric:
		return bad(strconv.Quote(hostPart)+" is a numeric address in a non-standard form", "write an IPv4 address as four decimal numbers, e.g. 10.1.2.3")
	case hostBadName:
		return bad(strconv.Quote(hostPart)+" is not a valid host name or IP address", "use letters, digits, hyphens and dots, e.g. status.example.com")
	}
	if h.ip.IsValid() {
		if e.wildcard {
			return bad("a wildcard cannot cover an IP address", "write the address alone, e.g. 10.1.2.3")
		}
		if h.ip.Is4In6() {
			return bad(h.ip.String()+" is an IPv4-mapped IPv6 address", "write the IPv4 address "+h.ip.Unmap().String()+" instead")
		}
		if c := ClassifyAddr(h.ip); c.Kind == KindSpecial {
			return bad(h.ip.String()+" is in the "+c.Range+", which is never reachable", "remove it; only public, private, loopback, link-local and metadata addresses can be listed")
		}
		e.ip = h.ip
		return e, nil
	}
	e.name = h.name
	if e.wildcard {
		if suffix, _ := publicsuffix.PublicSuffix(e.name); suffix == e.name {
			return bad("*."+e.name+" covers a public suffix, so it would allow sites of many unrelated owners", "name a domain you control, e.g. *.docs.example.com")
		}
		if c := classifyName("x." + e.name); c.internal {
			return bad("*."+e.name+" covers internal names, which a wildcard never unlocks", "list each internal host literally, e.g. wiki."+e.name)
		}
	}
	return e, nil
}

// isCIDR reports whether s looks like an address range such as 10.0.0.0/8.
func isCIDR(s string) bool {
	_, err := netip.ParsePrefix(strings.TrimPrefix(strings.TrimSuffix(s, "]"), "["))
	return err == nil
}

func cidrExample(s string) string {
	p, err := netip.ParsePrefix(strings.Trim(s, "[]"))
	if err != nil {
		return "10.1.2.3"
	}
	return p.Addr().Next().String()
}

// splitEntryPort separates "host:port", "[v6]:port", "[v6]" and a bare
// IPv6 address. It returns a problem sentence for malformed brackets.
func splitEntryPort(s string) (hostPart, port string, hasPort bool, problem string) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", false, "the [ of an IPv6 address is not closed"
		}
		hostPart, after := s[1:end], s[end+1:]
		if !strings.Contains(hostPart, ":") {
			return "", "", false, "brackets are only for IPv6 addresses"
		}
		if after == "" {
			return hostPart, "", false, ""
		}
		if after[0] != ':' {
			return "", "", false, "unexpected text after ]"
		}
		return hostPart, after[1:], true, ""
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, "", false, ""
	case 1:
		i := strings.IndexByte(s, ':')
		return s[:i], s[i+1:], true, ""
	default:
		return s, "", false, "" // a bare IPv6 address; parseHost checks it
	}
}

// hostOfURL extracts the host of a URL-like string for the fix of an entry
// that was typed as a URL.
func hostOfURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "status.example.com"
	}
	return s
}
