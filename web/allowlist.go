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

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// allowlistState is the allowlist as read for one request.
type allowlistState struct {
	// revision is read before the rows, so a page built from this state
	// can only ever conflict spuriously; it never hides a change its
	// admin did not see.
	revision int64
	rows     []models.AllowlistEntry
	entries  []guard.Entry // rows, parsed, in the same order
	settings guard.Settings
}

func (s *Server) loadAllowlist(ctx context.Context) (allowlistState, error) {
	st := allowlistState{settings: s.guardSettings()}
	var err error
	if st.revision, err = s.d.Store.Version(ctx, models.SectionAllowlist); err != nil {
		return st, err
	}
	if st.rows, err = s.d.Store.ListAllowlist(ctx); err != nil {
		return st, err
	}
	texts := make([]string, len(st.rows))
	for i, r := range st.rows {
		texts[i] = r.Entry
	}
	// The store only ever receives entries the guard normalised, so a row
	// that does not parse is corruption, not an admin's typo.
	st.entries, err = guard.ParseStoredEntries(texts)
	return st, err
}

// guardSettings returns the guard settings in force.
func (s *Server) guardSettings() guard.Settings {
	if s.d.Settings == nil {
		return guard.DefaultSettings()
	}
	return s.d.Settings().Guard
}

// find returns the row whose entry is text, as stored or as an admin
// might type it (upper case, a trailing dot).
func (st allowlistState) find(text string) (models.AllowlistEntry, guard.Entry, bool) {
	want := text
	if e, err := guard.ParseEntry(text); err == nil {
		want = e.String()
	}
	for i, r := range st.rows {
		if r.Entry == text || r.Entry == want {
			return r, st.entries[i], true
		}
	}
	return models.AllowlistEntry{}, guard.Entry{}, false
}

// card builds the card's view model.
func (st allowlistState) card(canEdit bool) views.EgressCard {
	ports := openPorts(st.settings)
	c := views.EgressCard{Revision: st.revision, CanEdit: canEdit, OpenPorts: ports}
	for i, r := range st.rows {
		e := st.entries[i]
		c.Entries = append(c.Entries, views.AllowRow{
			Entry: r.Entry, Scope: entryScope(e, ports), Note: r.Note,
			AddedBy: r.AddedBy, AddedAt: r.CreatedAt,
			Confirm: removeQuestion(e, ports, len(st.rows)),
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
		p.Form = &views.AllowForm{Revision: st.revision}
	}
	rows, err := s.d.Store.ListIntegrations(c.Request().Context())
	if err != nil {
		return p, err
	}
	p.HTTP.Admin = admin
	for _, r := range rows {
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
