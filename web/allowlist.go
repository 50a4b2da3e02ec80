package web

// The Outbound web access card on the Integrations page: the allowlist the
// guard enforces. Everyone signed in sees it and may test a URL against it;
// only admins add and remove entries. Every change is one transaction
// checked against the revision the admin's page was built from, is
// audited, and is reloaded into the running guard before the redirect, so
// the next decision already uses it.

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// allowlistState is the allowlist as read for one request, with the
// settings in force that say which ports an entry opens.
type allowlistState struct {
	app.AllowlistState
	settings guard.Settings
}

func (s *Server) loadAllowlist(ctx context.Context) (allowlistState, error) {
	st, err := s.d.Config.Allowlist(ctx)
	return allowlistState{AllowlistState: st, settings: s.guardSettings()}, err
}

// guardSettings returns the guard settings in force.
func (s *Server) guardSettings() guard.Settings {
	if s.d.Settings == nil {
		return guard.DefaultSettings()
	}
	return s.d.Settings().Guard
}

// card builds the card's view model.
func (st allowlistState) card(canEdit bool) views.EgressCard {
	ports := openPorts(st.settings)
	reach := st.ReachOf(guard.Scope{})
	c := views.EgressCard{Revision: st.Version, CanEdit: canEdit, OpenPorts: ports, Mode: app.BadgeOf(reach), Narrowed: !reach.PublicWeb, Listed: reach.Listed}
	last := st.LastNarrowing()
	for i, r := range st.Rows {
		e := st.Entries[i]
		who, agents, tools := rowView(r)
		c.Entries = append(c.Entries, views.AllowRow{
			ID: r.ID, Entry: r.Entry, Who: who, Agents: agents, Tools: tools, Internal: r.Internal, ReportOnly: r.ReportOnly,
			Scope: entryScope(e, ports), Note: r.Note,
			AddedBy: r.AddedBy, AddedAt: r.CreatedAt,
			Confirm: removeQuestion(e, ports, removalLen(last, r)),
		})
	}
	return c
}

// egressPage is the Integrations page for the signed-in user: admins get
// the add form. Every state of the page (a test result, a rejected add, a
// conflict, Allow this host, a remove confirmation) shows the HTTP
// integrations summary too, so it is filled here and not per handler.
func (s *Server) egressPage(c echo.Context, st allowlistState) (views.EgressPage, error) {
	admin := userOf(c).admin()
	p := views.EgressPage{Card: st.card(admin)}
	if admin {
		p.Form = &views.AllowForm{Revision: st.Version}
	}
	if err := s.fillScopeCard(c, st, &p); err != nil {
		return p, err
	}
	list, err := s.d.Config.ListIntegrations(c.Request().Context())
	if err != nil {
		return p, err
	}
	p.HTTP.Admin = admin
	for _, r := range list.Rows {
		p.HTTP.Names = append(p.HTTP.Names, r.Name)
	}
	return p, nil
}

func (s *Server) renderEgress(c echo.Context, status int, p views.EgressPage) error {
	return render(c, status, views.Integrations(s.shell(c, "Integrations", "integrations"), p))
}

func (s *Server) integrationsPage(c echo.Context) error {
	st, err := s.loadAllowlist(c.Request().Context())
	if err != nil {
		return err
	}
	p, err := s.egressPage(c, st)
	if err != nil {
		return err
	}
	// A link from elsewhere (an integration whose host is refused) may
	// fill the add form; the admin still reads and submits it.
	if p.Form != nil {
		p.Form.Entries, p.Form.Note = strings.TrimSpace(c.QueryParam("entry")), strings.TrimSpace(c.QueryParam("note"))
	}
	applySearch(&p.Card, c.QueryParam("q"))
	return s.renderEgress(c, http.StatusOK, p)
}

// formRevision reads the revision a form was built from.
func formRevision(c echo.Context) (int64, error) {
	raw := c.FormValue("revision")
	rev, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || rev < 0 {
		return 0, echo.NewHTTPError(http.StatusBadRequest,
			"The form did not say which version of the list it was built from (revision "+strconv.Quote(raw)+"). Reload Integrations and submit it again.")
	}
	return rev, nil
}

// removalLen stands for the list length the remove wording is built on:
// 1 when removing r returns its scope to PUBLIC WEB (the "last entry"
// wording), 2 otherwise.
func removalLen(last func(models.AllowlistEntry) bool, r models.AllowlistEntry) int {
	if last(r) {
		return 1
	}
	return 2
}
