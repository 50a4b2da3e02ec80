package web

// The CSRF defence of the browser console, in two layers, because one
// alone was beaten (issue 9, finding 1): a form token compared only with
// a cookie is worthless against a page on a sibling subdomain or another
// port of the same host, which may set that cookie itself ("cookie
// tossing") and then post a form carrying the same value.
//
//  1. Origin. A change (POST, PUT, PATCH, DELETE) whose Origin is not the
//     console's own (the scheme and Host the request came to), or, when a
//     browser sends no Origin, whose Sec-Fetch-Site is same-site or
//     cross-site, is refused. "Same site" is not enough: the sibling
//     subdomain and the other port are the same site.
//  2. A synchronizer token. For a signed-in browser the token is derived
//     from its session secret (HMAC keyed with the session cookie's value),
//     so it is bound to that one session, needs no column, survives a
//     restart, and cannot be computed from the database, which keeps only
//     a hash of the secret. A planted cookie changes nothing: the
//     expected token comes from the server's side of the session. Before
//     sign-in (the sign-in and setup forms) there is no session, so a
//     random token lives in a cookie, __Host- prefixed over HTTPS so a
//     sibling cannot overwrite it; there the Origin check is what stops
//     a planted cookie.
//
// A request with neither Origin nor Sec-Fetch-Site (an old client, or a
// script that is not a browser and so carries no victim's cookies) is
// left to the token alone.

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

const (
	// preSessionCSRFCookie holds the token of a browser that is not signed
	// in; cookieName adds __Host- over HTTPS.
	preSessionCSRFCookie = "outbound_csrf"
	csrfFormField        = "_csrf"
	csrfHeader           = "X-CSRF-Token"
	// sessionCSRFLabel separates the token's derivation from every other
	// use of the session secret (the stored hash is a plain SHA-256).
	sessionCSRFLabel = "outbound console csrf v1"
)

var (
	errCSRFToken    = echo.NewHTTPError(http.StatusForbidden, "The form was missing its security token or it had expired. Reload the page and try again.")
	errSessionEnded = echo.NewHTTPError(http.StatusUnauthorized, "You are not signed in, or your session has expired. Sign in and try again.")
	errCSRFSite     = echo.NewHTTPError(http.StatusForbidden, "The form was sent from another site, not from this console's own pages, so nothing was changed. Open the console at its own address, reload the page and try again.")
)

// servedOverTLS says whether the browser reached the console over HTTPS
// (directly, or through a proxy markHTTPS trusts): it decides the Secure
// flag and the __Host- cookie names.
func servedOverTLS(c echo.Context) bool {
	https, _ := c.Get(httpsKey).(bool)
	return c.Request().TLS != nil || https
}

// cookieName is the name of the console's cookie base on this request:
// over HTTPS, __Host-base, which a browser accepts only when Secure, for
// Path=/ and without Domain, so no other host or port can set it.
func cookieName(c echo.Context, base string) string {
	if servedOverTLS(c) {
		return "__Host-" + base
	}
	return base
}

// sessionCSRFToken is the form token of the session whose cookie value
// is secret.
func sessionCSRFToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(sessionCSRFLabel))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF runs after loadSession on every console route: it puts the
// request's token where the views read it (render.go's csrfToken) and
// refuses a change that fails either layer above.
func (s *Server) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		want, err := s.expectedCSRFToken(c)
		if err != nil {
			return err
		}
		c.Set("csrf", want)
		if !changesState(c.Request().Method) {
			return next(c)
		}
		if !fromOwnOrigin(c) {
			return errCSRFSite
		}
		got := c.Request().Header.Get(csrfHeader)
		if got == "" {
			got = c.FormValue(csrfFormField)
		}
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			if userOf(c) == nil && presentedSession(c) {
				// The form carries the token of a session that has since
				// ended: signing in again is the fix, not a reload.
				return errSessionEnded
			}
			return errCSRFToken
		}
		return next(c)
	}
}

// expectedCSRFToken is the session's token, or before sign-in the
// pre-session cookie's, setting a fresh cookie when there is none.
func (s *Server) expectedCSRFToken(c echo.Context) (string, error) {
	if u := userOf(c); u != nil && u.csrf != "" {
		return u.csrf, nil
	}
	name := cookieName(c, preSessionCSRFCookie)
	if ck, err := c.Cookie(name); err == nil && len(ck.Value) >= 32 {
		return ck.Value, nil
	}
	tok, err := randomSecret()
	if err != nil {
		return "", err
	}
	c.SetCookie(&http.Cookie{Name: name, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: servedOverTLS(c)})
	return tok, nil
}

// presentedSession says whether the request carried a session cookie,
// valid or not.
func presentedSession(c echo.Context) bool {
	ck, err := c.Cookie(cookieName(c, sessionCookie))
	return err == nil && ck.Value != ""
}

func changesState(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}

// fromOwnOrigin is the Origin layer. Behind a TLS-terminating proxy the
// console sees plain HTTP while the browser's origin is https, so over
// plain HTTP either scheme is accepted for the same host and port; over
// HTTPS only https is.
func fromOwnOrigin(c echo.Context) bool {
	r := c.Request()
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-site", "cross-site":
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		// No Origin: Sec-Fetch-Site (if any) was same-origin or none, or
		// the client is not a browser; the token decides.
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil {
		return false // includes "null", sent by sandboxed and opaque origins
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && !servedOverTLS(c):
	default:
		return false
	}
	if public, _ := c.Get(publicOriginKey).(string); public != "" && strings.EqualFold(origin, public) {
		return true // through a proxy that rewrote Host
	}
	return hostPortOf(u.Host, u.Scheme) == hostPortOf(r.Host, u.Scheme)
}

// hostPortOf is host lower-cased with the scheme's default port made
// explicit, so "Example.com" and "example.com:443" compare equal.
func hostPortOf(host, scheme string) string {
	host = strings.ToLower(host)
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}
