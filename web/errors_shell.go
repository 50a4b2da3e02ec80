package web

// Error pages for a signed-in user render inside the shell, with the
// rail, so a wrong link or a forbidden page is one click from somewhere
// useful rather than a dead end on a bare card.

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/views"
)

// linkedError is a 4xx whose page links somewhere better than the start
// page: the list a missing item was looked for in.
type linkedError struct {
	status  int
	message string
	next    views.ErrorLink
}

func (e *linkedError) Error() string { return e.message }

// notFoundIn is a 404 for an item missing from the list at href.
func notFoundIn(message, href, label string) error {
	return &linkedError{status: http.StatusNotFound, message: message, next: views.ErrorLink{Href: href, Label: label}}
}

// errorPageUser returns the signed-in user an error page is for, or nil
// when it should be the bare page (signed out, or a server fault).
func (s *Server) errorPageUser(c echo.Context, status int) *currentUser {
	if status != http.StatusForbidden && status != http.StatusNotFound && status != http.StatusConflict {
		return nil
	}
	return userOf(c)
}

// railKeyFor marks the rail item a path belongs to.
func railKeyFor(path string) string {
	for _, key := range []string{"integrations", "refusals", "agents", "users", "settings", "audit"} {
		if path == "/"+key || strings.HasPrefix(path, "/"+key+"/") || strings.HasPrefix(path, "/"+key+".") {
			return key
		}
	}
	return ""
}
