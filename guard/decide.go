package guard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
)

// Resolver looks up the addresses of a name. *net.Resolver implements it;
// tests inject a stub so that no query leaves the machine. The guard asks
// it for absolute names (with a trailing dot) and never for a localhost
// name, which is the loopback addresses (lookup.go); without one, the
// guard reads the hosts file before asking DNS (hosts.go).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Decide parses raw and decides it under this policy, resolving the host
// with r. It sends no request.
func (p *Policy) Decide(ctx context.Context, r Resolver, raw string) Decision {
	u, err := url.Parse(raw)
	if err != nil {
		return badURL(raw, err)
	}
	return p.DecideURL(ctx, r, u, raw)
}

// Precheck makes every check of Decide that needs no DNS lookup: the
// scheme, credentials, host form, internal names, literal addresses,
// ports and the allowlist. A refusal is final. An allowed precheck of a
// host name is not leave to connect: its addresses are unchecked, and the
// guard's client decides the URL in full before it sends anything. It
// serves a caller that needs the normalised URL, or an early refusal,
// before the request itself, without looking the name up twice.
func (p *Policy) Precheck(raw string) Decision {
	return p.PrecheckAs(context.Background(), raw)
}

// PrecheckAs is Precheck for the caller carried by ctx (WithCaller): a
// scoped rule decides for the callers it names only.
func (p *Policy) PrecheckAs(ctx context.Context, raw string) Decision {
	u, err := url.Parse(raw)
	if err != nil {
		return badURL(raw, err)
	}
	return p.decideURL(ctx, nil, u, raw)
}

func badURL(raw string, err error) Decision {
	return Decision{Input: raw, Code: CodeInvalid, Reason: ReasonBadURL,
		Message: fmt.Sprintf("%q is not a valid URL (%s).", raw, urlErrorReason(err)),
		Fix:     "Give a full URL such as https://status.example.com/."}
}

func urlErrorReason(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// DecideURL decides an already parsed URL. It may normalise u's host in
// place (lower case, punycode, no trailing dot), so that the request built
// from u goes to exactly the host that was decided.
func (p *Policy) DecideURL(ctx context.Context, r Resolver, u *url.URL, raw string) Decision {
	return p.decideURL(ctx, r, u, raw)
}

// decideURL is DecideURL, or Precheck when r is nil, for the caller in
// ctx. A request its enforced rules allow is tried against its
// report-only rules too (without a lookup: they can only narrow), and
// allowed with WouldRefuse set when they refuse it.
func (p *Policy) decideURL(ctx context.Context, r Resolver, u *url.URL, raw string) Decision {
	v := p.viewFor(CallerFrom(ctx))
	d := p.decideView(ctx, r, u, raw, v)
	if d.Allowed && v.trial != nil {
		if t := p.decideView(ctx, nil, u, raw, v.trial); !t.Allowed {
			d.WouldRefuse = t.Refusal()
		}
	}
	return d
}

// decideView decides u for the callers of view v.
func (p *Policy) decideView(ctx context.Context, r Resolver, u *url.URL, raw string, v *view) Decision {
	d := Decision{Input: raw, URL: u, narrow: v.narrow}
	if u.Scheme != "http" && u.Scheme != "https" {
		return d.refuse(CodeInvalid, ReasonScheme, schemeMessage(u.Scheme), "Ask for an http:// or https:// link instead.", Remedy{})
	}
	if u.Opaque != "" {
		return d.refuse(CodeInvalid, ReasonBadURL, "The URL has no // after its scheme, so it names no host.", "Write the URL as "+u.Scheme+"://host/path.", Remedy{})
	}
	if u.User != nil {
		return d.refuse(CodeInvalid, ReasonCredentials, "The URL carries a user name or password (user@host), which is never sent.", "Remove the user:password@ part from the URL.", Remedy{})
	}
	hostname, portText := u.Hostname(), u.Port()
	h, problem := parseHost(hostname)
	switch problem {
	case hostEmpty:
		return d.refuse(CodeInvalid, ReasonEmptyHost, "The URL has no host.", "Give a full URL such as https://status.example.com/.", Remedy{})
	case hostBadName:
		return d.refuse(CodeInvalid, ReasonBadHost, fmt.Sprintf("The host %q is not a valid host name or IP address.", hostname), "Check the host for typos; names use letters, digits, hyphens and dots.", Remedy{})
	case hostNumeric:
		return d.refuse(CodeInvalid, ReasonNumericHost, fmt.Sprintf("The host %q is an IP address in a non-standard numeric form, which is refused.", hostname), "Write an IPv4 address as four decimal numbers, such as 93.184.216.34.", Remedy{})
	case hostZone:
		return d.refuse(CodeInvalid, ReasonZone, fmt.Sprintf("The host %q is an IPv6 address with a zone, which is never reached.", hostname), "Use a public host name or address.", Remedy{})
	}
	d.Host = h.text
	if h.ip.IsValid() {
		d.literal = h.ip
	}

	port, ok := parsePort(portText, u.Scheme)
	if !ok {
		return d.refuse(CodeInvalid, ReasonBadPort, fmt.Sprintf("The port %q is not a number from 1 to 65535.", portText), "Remove the port or fix it.", Remedy{})
	}
	d.Port = port
	// The request is built from u, so u must name exactly what was decided:
	// the normalised host, and the port without leading zeros (the dialer
	// matches the port as text).
	if d.Host != hostname || (portText != "" && !canonicalPort(portText)) {
		canon := portText
		if canon != "" {
			canon = strconv.Itoa(int(port))
		}
		u.Host = joinHostPort(d.Host, canon)
	}
	portOpen := p.settings.portOpen(port)
	var listed bool
	d.Entry, listed = v.match(h, port, portOpen)

	// A host the admin listed, on another port, is a port problem. Under
	// the public web an internal host listed on another port is not: the
	// host is decided as any other (a public one is allowed).
	w := p.wording
	if d.Entry.IsZero() && listed && v.narrow {
		e := suggestEntry(h, port)
		return d.refuse(CodeForbidden, ReasonPort,
			fmt.Sprintf("%s is allowed, but not on port %d.", d.Host, port),
			fmt.Sprintf("Add %s %s to allow that port.", e, w.allowlist()), AddEntry(e))
	}

	// What the host is decides before whether it is listed: a refusal for
	// localhost or a metadata address must say so, and must never suggest
	// adding the metadata endpoint to the allowlist.
	if h.name != "" {
		if nc := classifyName(h.name); nc.internal {
			if nc.metadata {
				return d.refuse(CodeForbidden, ReasonMetadata,
					fmt.Sprintf("%s is %s, which hands out credentials and is always refused.", h.name, nc.why),
					"Nothing should unlock it; a host-name entry never does.", Remedy{})
			}
			if d.Entry.IsZero() || d.Entry.wildcard {
				e := suggestEntry(h, port)
				fix, remedy := literalFix(w, e, v.narrow)
				return d.refuse(CodeForbidden, ReasonInternalName,
					fmt.Sprintf("%s is %s, which is refused.", h.name, nc.why), fix, remedy)
			}
		}
	} else if c := ClassifyAddr(h.ip); !c.Public() && !unlocks(d.Entry, c.Kind, h.ip) {
		return d.refuseAddr(w, h, h.ip, c, v.narrow)
	}

	switch {
	case v.narrow && d.Entry.IsZero():
		e := suggestEntry(h, port)
		return d.refuse(CodeForbidden, ReasonNotAllowlisted,
			fmt.Sprintf("%s is not on the outbound allowlist.", d.Host),
			fmt.Sprintf("Add %s %s.", e, w.allowlist()), AddEntry(e))
	case !v.narrow && !portOpen && d.Entry.IsZero():
		// Two fixes; the entry is the one that admits exactly this host,
		// the port setting opens the port for every public host.
		e := suggestEntry(h, port)
		return d.refuse(CodeForbidden, ReasonPort,
			fmt.Sprintf("Port %d is not open; only ports %s are.", port, p.settings.openPorts()),
			fmt.Sprintf("Open port %d in %s, or add %s as an internal host %s, which opens the port for that host alone and keeps the public web open.", port, w.setting(SettingPorts), e, w.allowlist()), AddInternal(e))
	}

	if h.name != "" && r != nil {
		// lookupHost (lookup.go) says how a name is resolved, and why.
		addrs, err := lookupHost(ctx, r, h.name)
		if err != nil || len(addrs) == 0 {
			if ctx.Err() != nil {
				return d.refuse(CodeTimeout, ReasonTimeout, fmt.Sprintf("Looking up %s took too long.", h.name),
					"Try again later, or "+w.raise(SettingTimeout)+".", ChangeSetting(SettingTimeout)).network()
			}
			return d.refuse(CodeUnreachable, ReasonDNS, fmt.Sprintf("The host %s could not be found in DNS.", h.name),
				"Check the host name for typos.", Remedy{}).network()
		}
		d.resolved = unmapAll(addrs)
		for _, a := range d.resolved {
			if c := ClassifyAddr(a); !c.Public() && !unlocks(d.Entry, c.Kind, a) {
				return d.refuseAddr(w, h, a, c, v.narrow)
			}
		}
	}
	d.Allowed = true
	return d
}

// unlocks reports whether entry makes a non-public address of kind
// reachable. A wildcard never does; a literal entry unlocks loopback,
// private and CGNAT addresses; link-local addresses and metadata endpoints
// need a literal IP entry for that very address.
func unlocks(e Entry, kind AddrKind, a netip.Addr) bool {
	if e.IsZero() || e.wildcard {
		return false
	}
	switch kind {
	case KindLoopback, KindPrivate, KindCGNAT:
		return true
	case KindLinkLocal, KindMetadata:
		return e.ip.IsValid() && e.ip == a
	}
	return false
}

func (d Decision) refuse(code Code, reason Reason, message, fix string, remedy Remedy) Decision {
	d.Allowed, d.Code, d.Reason, d.Message, d.Fix, d.Remedy = false, code, reason, message, fix, remedy
	return d
}

// network marks a refusal as a failure of the network, not of the policy.
func (d Decision) network() Decision {
	d.Kind = KindNetwork
	return d
}

// literalFix is the fix that lets a caller reach internal host e: under
// the public web an internal host, which leaves the public web as it is;
// in allowlist mode a literal entry, which the scope lists anyway.
func literalFix(w Wording, e string, narrow bool) (string, Remedy) {
	// Joined, not formatted: a flood of private URLs writes this for each.
	if !narrow {
		return "If the agent should reach it, add " + e + " as an internal host " + w.allowlist() + "; that keeps the public web open.", AddInternal(e)
	}
	return "If the agent should reach it, add " + e + " as a literal entry " + w.allowlist() + ".", AddEntry(e)
}

func (d Decision) refuseAddr(w Wording, h host, a netip.Addr, c AddrClass, narrow bool) Decision {
	d.Range = c.Range
	subject := a.String()
	if h.name != "" {
		subject = h.name + " resolves to " + subject + ", which"
	}
	if c.Kind == KindMetadata {
		return d.refuse(CodeForbidden, ReasonMetadata,
			fmt.Sprintf("%s is a %s, which hands out credentials and is always refused.", subject, c.Range),
			fmt.Sprintf("Only adding the literal IP entry %s %s unlocks it; you almost certainly do not want that.", a, w.allowlist()), Remedy{})
	}
	msg := subject + " is in the " + c.Range + ", which is refused."
	var fix string
	// No remedy where the request as made stays refused: a special range,
	// or a host name (never) resolving to a link-local address.
	var remedy Remedy
	switch {
	case c.Kind == KindSpecial:
		fix = "Nothing unlocks this range; use a public address."
	case c.Kind == KindLinkLocal && h.name != "":
		fix = fmt.Sprintf("A host name never reaches a link-local address; if the agent must, use the address %s in the URL and add %s as a literal IP entry %s.", a, suggestEntry(host{ip: a}, d.Port), w.allowlist())
	case c.Kind == KindLinkLocal:
		e := suggestEntry(host{ip: a}, d.Port)
		fix, remedy = fmt.Sprintf("Only adding the literal IP entry %s %s unlocks a link-local address.", e, w.allowlist()), AddEntry(e)
	case d.Entry.wildcard:
		e := suggestEntry(h, d.Port)
		fix, remedy = fmt.Sprintf("The wildcard %s never unlocks internal addresses; add %s as a literal entry %s.", d.Entry, e, w.allowlist()), AddEntry(e)
	default:
		fix, remedy = literalFix(w, suggestEntry(h, d.Port), narrow)
	}
	return d.refuse(CodeForbidden, ReasonInternalAddress, msg, fix, remedy)
}

func schemeMessage(scheme string) string {
	if scheme == "" {
		return "The URL has no scheme; only http and https URLs can be opened."
	}
	return fmt.Sprintf("Only http and https URLs can be opened, not %s URLs.", scheme)
}

// parsePort returns the port of a URL, defaulting by scheme.
func parsePort(text, scheme string) (uint16, bool) {
	if text == "" {
		if scheme == "https" {
			return 443, true
		}
		return 80, true
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 || n > 65535 {
		return 0, false
	}
	return uint16(n), true
}

// suggestEntry writes the literal allowlist entry that would admit h on
// port, leaving the port out when it is a default one.
func suggestEntry(h host, port uint16) string {
	e := Entry{name: h.name, ip: h.ip.Unmap()} // entries name IPv4 hosts in IPv4 form
	if port != 80 && port != 443 {
		e.port = port
	}
	return e.String()
}

// canonicalPort reports whether a port's text has no leading zero.
func canonicalPort(text string) bool { return text == "0" || text[0] != '0' }

func joinHostPort(host, port string) string {
	if port == "" {
		if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, port)
}

// unmapAll returns addrs with IPv4-mapped answers unmapped, copying only
// when one needs it: the resolver's slice is not ours to change.
func unmapAll(addrs []netip.Addr) []netip.Addr {
	for i, a := range addrs {
		if a.Is4In6() {
			out := append([]netip.Addr(nil), addrs...)
			for j := i; j < len(out); j++ {
				out[j] = out[j].Unmap()
			}
			return out
		}
	}
	return addrs
}
