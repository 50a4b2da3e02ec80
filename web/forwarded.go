package web

// Behind a reverse proxy. The console sees the proxy as its peer, so the
// client's address (the sign-in throttle's source) and whether the browser
// used HTTPS (Secure and __Host- cookies) come from X-Forwarded-For and
// X-Forwarded-Proto, or from --public-url. Those headers are anyone's to
// send, so they count only from a peer in Deps.TrustedProxies; nothing,
// not even loopback, is trusted by default.

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"
)

// Context keys markHTTPS sets.
const (
	httpsKey        = "outbound.https"         // bool: the browser reached the console over HTTPS
	publicOriginKey = "outbound.public_origin" // string: the public URL's origin
)

// clientIP is Echo's IPExtractor: the peer's address, or, from a trusted
// proxy, the nearest untrusted address in X-Forwarded-For.
func clientIP(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// trustedPeer says whether r came straight from a trusted proxy.
func (s *Server) trustedPeer(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := ap.Addr().Unmap()
	for _, p := range s.d.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// markHTTPS records, before anything sets a cookie, whether the browser
// reached the console over HTTPS: the public URL is https, or a trusted
// proxy says X-Forwarded-Proto: https.
func (s *Server) markHTTPS(next echo.HandlerFunc) echo.HandlerFunc {
	var public string
	if u := s.d.PublicURL; u != nil {
		public = u.Scheme + "://" + u.Host
	}
	return func(c echo.Context) error {
		r := c.Request()
		if public != "" {
			c.Set(publicOriginKey, public)
		}
		if strings.HasPrefix(public, "https:") ||
			(s.trustedPeer(r) && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")) {
			c.Set(httpsKey, true)
		}
		return next(c)
	}
}
