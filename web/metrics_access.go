package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/tools"
)

// requireScraper lets /metrics be read with an agent's API token (how a
// Prometheus scraper authenticates: bearer_token in its config) or by a
// signed-in admin. The counts name hosts and agents, so they are not public.
// Tokens are checked by the application layer, the same check as the
// tools' API, so a scrape also marks the token as used.
func (s *Server) requireScraper(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if userOf(c).admin() {
			return next(c)
		}
		token, bearer := tools.BearerToken(c.Request())
		// A signed-in support user is known: asking them to sign in would
		// send them round in a circle.
		if userOf(c) != nil && !bearer {
			return echo.NewHTTPError(http.StatusForbidden, "Only admins (or an agent token) can read /metrics.")
		}
		if bearer && s.d.Agents != nil {
			if _, err := s.d.Agents.VerifyToken(c.Request().Context(), token); err == nil {
				return next(c)
			} else if !errors.Is(err, tools.ErrBadToken) {
				return err
			}
		}
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="outbound"`)
		return echo.NewHTTPError(http.StatusUnauthorized, "Reading /metrics needs an agent's API token (Authorization: Bearer …, e.g. a Prometheus bearer_token) or an admin's session.")
	}
}
