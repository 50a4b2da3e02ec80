package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/views"
)

// render writes a templ component as the response.
func render(c echo.Context, status int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response().Writer)
}

// shell builds the page frame for the signed-in user. It reads (and
// clears) the flash notice left by the previous POST.
func (s *Server) shell(c echo.Context, title, active string) views.Shell {
	u := userOf(c)
	sh := views.Shell{Title: title, Active: active, CSRF: csrfToken(c), Flash: s.takeFlash(c)}
	if u != nil {
		sh.User, sh.Admin = u.Name, u.admin()
	}
	return sh
}

func csrfToken(c echo.Context) string {
	t, _ := c.Get("csrf").(string)
	return t
}

const flashCookie = "outbound_flash"

// flash leaves a notice for the page the browser is redirected to. Its
// cookie is named and marked as the session's (cookieName): takeFlash
// clears it under that name, and over HTTPS a cookie set under another
// name would outlive the clearing and show on every page.
func (s *Server) flash(c echo.Context, kind, message string) {
	c.SetCookie(&http.Cookie{Name: cookieName(c, flashCookie), Value: url.QueryEscape(kind + "|" + message), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: servedOverTLS(c)})
}

func (s *Server) takeFlash(c echo.Context) views.Flash {
	ck, err := c.Cookie(cookieName(c, flashCookie))
	if err != nil || ck.Value == "" {
		return views.Flash{}
	}
	s.clearCookie(c, flashCookie)
	v, err := url.QueryUnescape(ck.Value)
	if err != nil {
		return views.Flash{}
	}
	kind, msg, ok := strings.Cut(v, "|")
	if !ok || (kind != "ok" && kind != "error") {
		return views.Flash{}
	}
	return views.Flash{Kind: kind, Message: msg}
}

// redirect finishes a POST: Post/Redirect/Get, so a reload never resubmits.
func redirect(c echo.Context, to string) error { return c.Redirect(http.StatusSeeOther, to) }

// safeNext keeps a post-login redirect on this site. Browsers drop tabs
// and line breaks from a Location and read a backslash as a slash, so
// "/\t/evil.example" would leave the site: the check runs on the URL as
// a browser will read it, and only a plain path (and query) passes.
func safeNext(next string) string {
	const home = "/integrations"
	cleaned := strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\r', '\n':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, next)
	if cleaned != next || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return home
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.ContainsAny(next, "\x00") {
		return home
	}
	return next
}
