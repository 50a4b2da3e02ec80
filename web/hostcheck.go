package web

// The Host check. A DNS-rebinding page first resolves its own name to the
// attacker's server, then to 127.0.0.1: the admin's browser then sends the
// page's requests to the console, with the attacker's name in Host and no
// cookie of the console (so sign-in protects the admin pages, but not
// /login, /healthz or the token-checked API and MCP, which a page could
// still probe or brute-force from the admin's network position). The
// console therefore answers only names it knows to be its own, on every
// route, and 421 Misdirected Request to anything else.
//
// Which Host is its own:
//   - the host of Deps.PublicURL (serve --public-url), and
//   - a name or host:port in Deps.AllowedHosts (a name alone matches any
//     port: rebinding needs a name the attacker controls, and these are
//     the admin's);
//   - localhost, 127.0.0.1 (any 127/8) and [::1], on the port the console
//     is bound to;
//   - the IP it is bound to, on that port; when bound to 0.0.0.0 or [::],
//     any IP literal on that port (the machine's own addresses: an IP
//     literal cannot be rebound, since the browser's origin is that IP);
//   - when Deps.Listen is unknown (a console built by hand, in tests),
//     the loopback names and addresses on any port, and nothing else.

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

type hostCheck struct {
	port   string     // the bound port; "" when unknown (any port)
	ip     netip.Addr // the bound IP; invalid when unknown
	names  map[string]bool
	pairs  map[string]bool // host:port entries, lower-case
	origin string          // where to reach the console, in the 421 answer
}

func newHostCheck(listen net.Addr, allowed []string, public *url.URL) *hostCheck {
	hc := &hostCheck{names: map[string]bool{}, pairs: map[string]bool{}, origin: "the address console serve printed (localhost or 127.0.0.1 on its port)"}
	if listen != nil {
		if ap, err := netip.ParseAddrPort(listen.String()); err == nil {
			hc.ip, hc.port = ap.Addr().Unmap(), strconv.Itoa(int(ap.Port()))
			host := ap.Addr().Unmap()
			if host.IsUnspecified() {
				host = netip.AddrFrom4([4]byte{127, 0, 0, 1})
			}
			hc.origin = "http://" + netip.AddrPortFrom(host, ap.Port()).String() + "/ (or localhost on that port)"
		}
	}
	if public != nil {
		// The public URL's host, as a name alone or host:port.
		allowed = append(allowed[:len(allowed):len(allowed)], public.Host)
		hc.origin = public.String()
	}
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSpace(a))
		if h, p, err := net.SplitHostPort(a); err == nil {
			hc.pairs[net.JoinHostPort(h, p)] = true
		} else if a != "" {
			hc.names[strings.Trim(a, "[]")] = true
		}
	}
	return hc
}

// allows says whether the console answers to hostHeader, as sent (an
// absent port is the scheme's default).
func (hc *hostCheck) allows(hostHeader string, tls bool) bool {
	hostHeader = strings.ToLower(hostHeader)
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		host, port = strings.Trim(hostHeader, "[]"), "80"
		if tls {
			port = "443"
		}
	}
	if host == "" {
		return false
	}
	if hc.names[host] || hc.pairs[net.JoinHostPort(host, port)] {
		return true
	}
	onPort := hc.port == "" || port == hc.port
	if host == "localhost" {
		return onPort
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return false
	}
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return onPort
	case !hc.ip.IsValid():
		return false
	case hc.ip.IsUnspecified(), ip == hc.ip:
		return onPort
	}
	return false
}

// checkHost answers 421 to a request whose Host is not the console's.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if s.hosts.allows(r.Host, servedOverTLS(c)) {
			return next(c)
		}
		s.d.Log.Info("request to another host name refused", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
		c.Response().Header().Set("Connection", "close")
		return echo.NewHTTPError(http.StatusMisdirectedRequest,
			"This console does not answer to the name "+strconv.Quote(r.Host)+": a page that reaches it under another name may be a DNS-rebinding attack. Open the console at "+s.hosts.origin+"; to reach it under another name, give that name to console serve --addr or --public-url.")
	}
}
