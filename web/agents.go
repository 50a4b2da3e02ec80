package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

func (s *Server) agentRows(c echo.Context) ([]views.AgentRow, error) {
	toks, err := s.d.Identity.ListTokens(c.Request().Context())
	if err != nil {
		return nil, err
	}
	rows := make([]views.AgentRow, len(toks))
	for i, t := range toks {
		rows[i] = views.AgentRow{Name: t.Name, CreatedAt: t.CreatedAt}
		if t.LastUsedAt != nil {
			rows[i].LastUsed = *t.LastUsedAt
		}
		if t.RevokedAt != nil {
			rows[i].RevokedAt = *t.RevokedAt
		}
	}
	return rows, nil
}

func (s *Server) agentsPage(c echo.Context) error {
	return s.renderAgents(c, http.StatusOK, "", "")
}

func (s *Server) renderAgents(c echo.Context, status int, name, problem string) error {
	rows, err := s.agentRows(c)
	if err != nil {
		return err
	}
	return render(c, status, views.Agents(s.shell(c, "Agents", "agents"), views.AgentsPage{Tokens: rows, Name: name, Error: problem}))
}

// createToken mints a token and redirects to its one-time view
// (agents_token_view.go): the secret stays out of URLs, cookies and
// caches, and reloading the page that shows it submits nothing again.
func (s *Server) createToken(c echo.Context) error {
	name := strings.TrimSpace(c.FormValue("name"))
	u := userOf(c)
	view, err := s.d.Identity.CreateTokenForView(c.Request().Context(), s.d.Now(), u.Name, name, u.sessionID, c.Scheme()+"://"+c.Request().Host)
	switch {
	case tokenNameMessage(err) != "":
		return s.renderAgents(c, http.StatusUnprocessableEntity, name, tokenNameMessage(err))
	case errors.Is(err, models.ErrDuplicate):
		return s.renderAgents(c, http.StatusUnprocessableEntity, name,
			fmt.Sprintf("A token named %q already exists (revoked tokens keep their name); pick another name, e.g. %s-2.", name, name))
	case err != nil:
		return err
	}
	return redirect(c, "/agents/new/"+view)
}

func (s *Server) revokeToken(c echo.Context) error {
	name := c.FormValue("name")
	rows, err := s.agentRows(c)
	if err != nil {
		return err
	}
	var found *views.AgentRow
	for i := range rows {
		if rows[i].Name == name {
			found = &rows[i]
		}
	}
	switch {
	case found == nil:
		return noTokenNamed(name)
	case !found.RevokedAt.IsZero():
		return s.alreadyRevoked(c, name)
	case c.FormValue("confirmed") != "yes":
		return render(c, http.StatusOK, views.AgentRevokeConfirm(s.shell(c, "Revoke "+name, "agents"), name))
	}
	// The token may have changed since the list was read: the operation
	// decides again, in its transaction.
	var already *app.AlreadyRevokedError
	switch err := s.d.Identity.RevokeToken(c.Request().Context(), userOf(c).Name, name); {
	case errors.As(err, &already):
		return s.alreadyRevoked(c, name)
	case errors.Is(err, models.ErrNotFound):
		return noTokenNamed(name)
	case err != nil:
		return err
	}
	s.flash(c, "ok", fmt.Sprintf("The token %s is revoked. The agent using it is refused from its next request.", name))
	return redirect(c, "/agents")
}

// noTokenNamed is 422, not 404: the central error page replaces a 404's
// message with "no page here", and this names what is missing.
func noTokenNamed(name string) error {
	return echo.NewHTTPError(http.StatusUnprocessableEntity, fmt.Sprintf("There is no token named %q. Open Agents again and pick a token from the list.", name))
}

func (s *Server) alreadyRevoked(c echo.Context, name string) error {
	s.flash(c, "ok", fmt.Sprintf("The token %s was already revoked; nothing changed.", name))
	return redirect(c, "/agents")
}
