package web

import (
	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/models"
)

// Where each role lands. Support staff start on the Overview, the picture
// of what was refused that their work begins with; admins keep the
// Integrations page, where the allowlist and settings they change live
// (the Overview is one click away in the rail).
func homeFor(role models.Role) string {
	if role == models.RoleAdmin {
		return "/integrations"
	}
	return "/overview"
}

// home sends "/" to the signed-in user's landing page, or to sign-in.
func (s *Server) home(c echo.Context) error {
	u := userOf(c)
	if u == nil {
		return redirect(c, "/login")
	}
	return redirect(c, homeFor(u.Role))
}
