package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// A new agent token is shown by post/redirect/get, so reloading the page
// that shows it does not submit the create form again (which answered 422
// "already exists"). The secret must still never sit in a URL, a cookie
// or a cache, and be shown only once: the POST parks it, sealed, in the
// database (app.ParkTokenView) under a random view ID that only the
// creating session may open, and the first GET on any replica spends it.
// A reload finds the view spent and says so.

// newTokenPage is the GET after creating a token: the token once, then
// a page that says it was shown and what to do if it was not copied.
func (s *Server) newTokenPage(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	view, err := s.d.Identity.TakeTokenView(c.Request().Context(), s.d.Now(), userOf(c).sessionID, c.Param("view"))
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	if view.Token == "" {
		return render(c, http.StatusGone, views.AgentTokenShown(s.shell(c, "Token already shown", "agents"), view.Name))
	}
	return render(c, http.StatusOK, views.AgentToken(s.shell(c, "Token for "+view.Name, "agents"), views.AgentNewToken{
		Name: view.Name, Token: view.Token, MCPURL: view.Base + "/mcp", APIURL: view.Base + "/api/v1/tools/fetch_url",
	}))
}
