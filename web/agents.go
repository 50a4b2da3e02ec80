package web

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/views"
)

// tokenName is the rule `console token create` applies too, so a name
// made in one place is valid in the other. It is also safe in a URL, a
// log line and a CSV cell.
var tokenName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`)

// checkTokenName returns what is wrong with a token name, or "".
func checkTokenName(name string) string {
	switch {
	case name == "":
		return "Enter a name for the agent, e.g. helpdesk-bot."
	case len(name) > 64:
		return fmt.Sprintf("The name is %d characters long; use at most 64.", len(name))
	case !tokenName.MatchString(name):
		return fmt.Sprintf("%q is not a token name: use letters, digits, dots, hyphens or underscores, starting with a letter or digit, e.g. helpdesk-bot.", name)
	}
	return ""
}

func (s *Server) agentRows(c echo.Context) ([]views.AgentRow, error) {
	toks, err := s.d.Store.ListTokens(c.Request().Context())
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

// createToken mints a token and shows it on the response itself: no
// redirect, so the secret never sits in a URL, a flash cookie or the
// browser's cache, and a reload cannot show it again.
func (s *Server) createToken(c echo.Context) error {
	name := strings.TrimSpace(c.FormValue("name"))
	if msg := checkTokenName(name); msg != "" {
		return s.renderAgents(c, http.StatusUnprocessableEntity, name, msg)
	}
	token, err := tools.NewToken()
	if err != nil {
		return err
	}
	if _, err := s.d.Store.CreateToken(c.Request().Context(), name, tools.HashToken(token)); err != nil {
		if errors.Is(err, models.ErrDuplicate) {
			return s.renderAgents(c, http.StatusUnprocessableEntity, name,
				fmt.Sprintf("A token named %q already exists (revoked tokens keep their name); pick another name, e.g. %s-2.", name, name))
		}
		return err
	}
	u := userOf(c)
	s.audit(c, models.Audit{Actor: u.Name, Action: "token.create", Target: name, After: "active"})
	c.Response().Header().Set("Cache-Control", "no-store")
	base := c.Scheme() + "://" + c.Request().Host
	return render(c, http.StatusCreated, views.AgentToken(s.shell(c, "Token for "+name, "agents"), views.AgentNewToken{
		Name: name, Token: token, MCPURL: base + "/mcp", APIURL: base + "/api/v1/tools/fetch_url",
	}))
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
		// 422, not 404: the central error page replaces a 404's message
		// with "no page here", and this names what is missing.
		return echo.NewHTTPError(http.StatusUnprocessableEntity, fmt.Sprintf("There is no token named %q. Open Agents again and pick a token from the list.", name))
	case !found.RevokedAt.IsZero():
		s.flash(c, "ok", fmt.Sprintf("The token %s was already revoked; nothing changed.", name))
		return redirect(c, "/agents")
	case c.FormValue("confirmed") != "yes":
		return render(c, http.StatusOK, views.AgentRevokeConfirm(s.shell(c, "Revoke "+name, "agents"), name))
	}
	if err := s.d.Store.RevokeToken(c.Request().Context(), name); err != nil {
		return err
	}
	s.audit(c, models.Audit{Actor: userOf(c).Name, Action: "token.revoke", Target: name, Before: "active", After: "revoked"})
	s.flash(c, "ok", fmt.Sprintf("The token %s is revoked. The agent using it is refused from its next request.", name))
	return redirect(c, "/agents")
}
