package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/views"
)

// handleError is the one place errors become responses. An *echo.HTTPError
// carries a message meant for the user; anything else is an internal error
// whose cause goes to the log and never to the page.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, "Something went wrong on our side. The cause is in the server log; try again."
	next := views.ErrorLink{Href: "/integrations", Label: "Go to Integrations"}
	var he *echo.HTTPError
	var le *linkedError
	switch {
	case errors.As(err, &le):
		status, msg, next = le.status, le.message, le.next
	case errors.As(err, &he):
		status = he.Code
		if m, ok := he.Message.(string); ok && status < 500 {
			msg = m
		}
		// A bare 404 (no route, or a handler's plain NotFound) names the
		// path; a handler's own sentence is kept.
		if status == http.StatusNotFound && (he.Message == nil || he.Message == http.StatusText(http.StatusNotFound)) {
			msg = "There is no page at " + c.Request().URL.Path + "."
		}
		if status == http.StatusMethodNotAllowed {
			msg = c.Request().Method + " is not allowed at " + c.Request().URL.Path + "."
		}
	}
	if status >= 500 {
		s.d.Log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if strings.HasPrefix(c.Request().URL.Path, "/api/") || strings.Contains(c.Request().Header.Get("Accept"), "application/json") && !strings.Contains(c.Request().Header.Get("Accept"), "text/html") {
		_ = c.JSON(status, map[string]any{"error": map[string]string{"code": strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_")), "message": msg}})
		return
	}
	title := map[int]string{
		http.StatusForbidden: "Not allowed", http.StatusNotFound: "Not found", http.StatusUnauthorized: "Sign in needed",
		http.StatusTooManyRequests: "Too many attempts", http.StatusConflict: "Changed meanwhile",
	}[status]
	if title == "" {
		title = http.StatusText(status)
	}
	if u := s.errorPageUser(c, status); u != nil {
		_ = render(c, status, views.ShellError(s.shell(c, title, railKeyFor(c.Request().URL.Path)), status, msg, next))
		return
	}
	back := "/integrations"
	if userOf(c) == nil {
		back = "/login"
	}
	_ = render(c, status, views.ErrorPage(status, title, msg, back))
}
