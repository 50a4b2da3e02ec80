package tools

import (
	"net"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/outboundhq/outbound/guard"
)

// browserAddress turns what the agent wrote into the URL browser_open
// loads, or a refusal. Agents write addresses the way people do, so one
// without a scheme is completed: http for localhost and loopback
// literals (a developer's server, which rarely has a certificate), https
// for everything else. What is not a web address is refused here, before
// the guard and long before a browser: file://, javascript:, data:, a bare
// path, and user:password@ (a credential the model would be handing to
// whoever logs the URL).
func browserAddress(raw string) (string, *guard.Refusal) {
	s := strings.TrimSpace(raw)
	bad := func(reason guard.Reason, msg string) (string, *guard.Refusal) {
		return "", &guard.Refusal{Code: guard.CodeInvalid, Reason: reason, Tool: BrowserOpenName, URL: firstLine(s),
			Message: msg, Fix: "Pass a web address such as https://example.com/pricing or localhost:3000."}
	}
	switch {
	case s == "":
		return bad(guard.ReasonBadURL, "The address is empty.")
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, `\`):
		return bad(guard.ReasonScheme, "A path on a disk is not a web address; the browser opens only http and https pages.")
	case strings.ContainsAny(s, " \t\r\n"):
		return bad(guard.ReasonBadURL, "The address contains spaces or line breaks.")
	}
	credentials := "The address carries a user name or password (user:password@), which the browser never sends."
	if scheme, _, ok := strings.Cut(s, ":"); ok && isScheme(scheme) && !looksLikeHostPort(s) {
		switch strings.ToLower(scheme) {
		case "http", "https":
		default:
			return bad(guard.ReasonScheme, "The browser opens only http and https addresses, not "+strings.ToLower(scheme)+": ones.")
		}
	} else {
		scheme := "https"
		if host := hostOfBare(s); isLoopbackHost(host) {
			scheme = "http"
		}
		s = scheme + "://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return bad(guard.ReasonBadURL, "This is not a web address.")
	}
	if u.User != nil {
		return bad(guard.ReasonCredentials, credentials)
	}
	return s, nil
}

// isScheme reports whether s has the shape of a URL scheme.
func isScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')
	}) < 0
}

// looksLikeHostPort tells "localhost:3000/x" (a host and port without a
// scheme) from "mailto:x" (a scheme): a colon followed by digits up to
// the end or a slash.
func looksLikeHostPort(s string) bool {
	_, rest, _ := strings.Cut(s, ":")
	port, _, _ := strings.Cut(rest, "/")
	if port == "" {
		return false
	}
	return strings.IndexFunc(port, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

// hostOfBare is the host of an address written without a scheme.
func hostOfBare(s string) string {
	u, err := url.Parse("http://" + s)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// isLoopbackHost is localhost (and its subdomains) or a loopback literal.
func isLoopbackHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// siteOf is the site a host belongs to, the unit of the one-site rule:
// its registrable domain, which the public suffix list knows
// (a.example.co.uk and b.example.co.uk are example.co.uk; x.github.io
// and y.github.io are themselves, since github.io is a public suffix).
// An IP literal, a single-label name such as localhost, and a name the
// list cannot place are their own site.
func siteOf(host string) string {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "" {
		return ""
	}
	if net.ParseIP(h) != nil || !strings.Contains(h, ".") {
		return h
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return "localhost"
	}
	site, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return h // a public suffix itself, such as github.io
	}
	return site
}

// siteOfURL is the site of a URL's host; "" for a URL without one.
func siteOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return siteOf(u.Hostname())
}
