package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// integrationList is read-only for support users; it never holds a
// secret value.
func (s *Server) integrationList(c echo.Context) error {
	list, err := s.d.Config.ListIntegrations(c.Request().Context())
	if err != nil {
		return err
	}
	l := views.IntegrationList{Admin: userOf(c).admin()}
	for _, r := range list.Rows {
		row := views.IntegrationRow{Name: r.Name, Description: r.Description, Method: r.Method, URL: r.URLTemplate,
			UpdatedBy: r.UpdatedBy, Updated: r.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC")}
		for _, p := range r.Params {
			row.Params = append(row.Params, app.DescribeParam(p))
		}
		for _, h := range r.Headers {
			row.Headers = append(row.Headers, app.DescribeHeader(h))
		}
		if ref := s.integrationHostRefusal(c.Request().Context(), r.Name, r.URLTemplate); ref != nil {
			w := hostWarning(ref, r.Name, l.Admin)
			row.HostRefused = &w
		}
		l.Rows = append(l.Rows, row)
	}
	return render(c, http.StatusOK, views.IntegrationsPage(s.shell(c, "HTTP integrations", "integrations"), l))
}

func (s *Server) integrationNew(c echo.Context) error {
	list, err := s.d.Config.ListIntegrations(c.Request().Context())
	if err != nil {
		return err
	}
	f := newIntegrationForm()
	f.Revision = list.Version
	return s.renderIntegrationForm(c, http.StatusOK, f)
}

func (s *Server) integrationCreate(c echo.Context) error {
	if addParamRequested(c) {
		return s.addParamRow(c, nil)
	}
	in := readIntegrationForm(c, nil)
	in.form.New = true
	if len(in.form.Errors) > 0 {
		return s.renderIntegrationForm(c, http.StatusUnprocessableEntity, in.form)
	}
	saved, err := s.d.Config.CreateIntegration(c.Request().Context(), app.SaveIntegration{Input: in.input, Actor: userOf(c).Name, Version: in.form.Revision})
	if answered, rerr := s.integrationRefused(c, &in, err); answered {
		return rerr
	}
	msg := s.allowIntegrationHost(c, in.form.AllowHost, saved.Row.Name, saved.Row.URLTemplate)
	if ref := s.integrationHostRefusal(c.Request().Context(), saved.Row.Name, saved.Row.URLTemplate); ref != nil {
		return s.integrationSaved(c, saved.Row.Name, savedButRefused(saved.Row.Name, "created", ref)+msg, true, err)
	}
	return s.integrationSaved(c, saved.Row.Name, "Integration "+saved.Row.Name+" created. Agents can call it now."+msg, false, err)
}

func (s *Server) integrationEdit(c echo.Context) error {
	f, _, err := s.storedIntegrationForm(c)
	if err != nil {
		return err
	}
	return s.renderIntegrationForm(c, http.StatusOK, f)
}

func (s *Server) integrationUpdate(c echo.Context) error {
	_, old, err := s.storedIntegrationForm(c)
	if err != nil {
		return err
	}
	if addParamRequested(c) {
		return s.addParamRow(c, &old)
	}
	in := readIntegrationForm(c, &old)
	in.form.OriginalName = old.Name
	in.form.ConfirmRename = c.FormValue("confirm_rename") == "yes"
	if len(in.form.Errors) > 0 {
		return s.renderIntegrationForm(c, http.StatusUnprocessableEntity, in.form)
	}
	saved, err := s.d.Config.UpdateIntegration(c.Request().Context(), old.Name,
		app.SaveIntegration{Input: in.input, Actor: userOf(c).Name, Version: in.form.Revision, ConfirmRename: in.form.ConfirmRename})
	if answered, rerr := s.integrationRefused(c, &in, err); answered {
		return rerr
	}
	allowed := s.allowIntegrationHost(c, in.form.AllowHost, saved.Row.Name, saved.Row.URLTemplate)
	msg := "Integration " + saved.Row.Name + " saved. Agents see the change now."
	if ref := s.integrationHostRefusal(c.Request().Context(), saved.Row.Name, saved.Row.URLTemplate); ref != nil {
		verb := "saved"
		if saved.Renamed() {
			verb = "(renamed from " + old.Name + ") saved"
		}
		return s.integrationSaved(c, saved.Row.Name, savedButRefused(saved.Row.Name, verb, ref)+allowed, true, err)
	}
	if saved.Renamed() {
		msg = "Integration " + old.Name + " renamed to " + saved.Row.Name + " and saved. Agents must call it " + saved.Row.Name + " now."
	}
	return s.integrationSaved(c, saved.Row.Name, msg+allowed, false, err)
}

func (s *Server) integrationDelete(c echo.Context) error {
	_, old, err := s.storedIntegrationForm(c)
	if err != nil {
		return err
	}
	if c.FormValue("confirmed") != "yes" {
		return render(c, http.StatusOK, views.IntegrationDeleteConfirm(s.shell(c, "Delete "+old.Name, "integrations"), old.Name, c.FormValue("revision")))
	}
	rev, err := parseRevision(c.FormValue("revision"))
	if err != nil {
		return err
	}
	err = s.d.Config.DeleteIntegration(c.Request().Context(), old.Name, userOf(c).Name, rev)
	var notReloaded *app.NotReloadedError
	switch {
	case errors.Is(err, models.ErrConflict):
		return echo.NewHTTPError(http.StatusConflict, "The configuration changed while you were deciding. Open the integration again and delete it from there.")
	case errors.Is(err, models.ErrNotFound):
		return notFoundIn("There is no integration named "+old.Name+"; someone else deleted it.", "/integrations/http", "See the HTTP integrations")
	case errors.As(err, &notReloaded):
		s.flash(c, "error", "Integration "+old.Name+" deleted, but the running tools did not reload (the cause is in the server log); agents stop seeing it at the next check of the database, or restart the console.")
		return redirect(c, "/integrations/http")
	case err != nil:
		return err
	}
	s.flash(c, "ok", "Integration "+old.Name+" deleted. Agents no longer see it.")
	return redirect(c, "/integrations/http")
}

// integrationSaved returns to the edit page with the operation's outcome:
// saved and in force, saved but refused by the policy (warn), or saved
// but not yet reloaded.
func (s *Server) integrationSaved(c echo.Context, name, msg string, warn bool, err error) error {
	if err != nil { // a *app.NotReloadedError: the rest was answered before
		s.flash(c, "error", msg+" But the running tools did not reload it (the cause is in the server log); agents see it at the next check of the database, or restart the console.")
		return redirect(c, "/integrations/http/"+name)
	}
	kind := "ok"
	if warn {
		kind = "error"
	}
	s.flash(c, kind, msg)
	return redirect(c, "/integrations/http/"+name)
}

// integrationRefused answers a save the operation refused (a conflict, a
// taken name, a problem) with the form again and the admin's input, so
// that nothing typed is lost. It reports whether it answered; it does
// not for a save that went through, even one not yet reloaded, which the
// caller words.
func (s *Server) integrationRefused(c echo.Context, in *integrationInput, err error) (bool, error) {
	f := in.form
	var invalid *app.ValidationError
	var conflict *app.ConflictError
	var notReloaded *app.NotReloadedError
	switch {
	case err == nil, errors.As(err, &notReloaded):
		return false, nil
	case errors.As(err, &conflict):
		f.Revision = conflict.Current
		f.FormError = "Someone changed the configuration while you were editing. Your input is kept below (secret values must be typed again); check it and save again."
		return true, s.renderIntegrationForm(c, http.StatusConflict, f)
	case errors.Is(err, models.ErrDuplicate):
		f.Errors = map[string]string{"name": "An integration named " + f.Name + " already exists. Choose another name."}
		return true, s.renderIntegrationForm(c, http.StatusUnprocessableEntity, f)
	case errors.Is(err, models.ErrNotFound):
		return true, notFoundIn("There is no integration named "+f.OriginalName+"; someone else deleted it.", "/integrations/http", "See the HTTP integrations")
	case errors.As(err, &invalid):
		in.showProblems(invalid.Problems)
		return true, s.renderIntegrationForm(c, http.StatusUnprocessableEntity, in.form)
	}
	return true, err
}

// storedIntegrationForm loads the integration named in the path.
func (s *Server) storedIntegrationForm(c echo.Context) (views.IntegrationForm, models.Integration, error) {
	st, err := s.d.Config.Integration(c.Request().Context(), c.Param("name"))
	if errors.Is(err, models.ErrNotFound) {
		return views.IntegrationForm{}, st.Row, notFoundIn("There is no integration named "+c.Param("name")+".", "/integrations/http", "See the HTTP integrations")
	}
	if err != nil {
		return views.IntegrationForm{}, st.Row, err
	}
	f := formFromRow(st.Row)
	f.Revision = st.Version
	return f, st.Row, nil
}

func (s *Server) renderIntegrationForm(c echo.Context, status int, f views.IntegrationForm) error {
	title := "New integration"
	if !f.New {
		title = f.OriginalName
	}
	padIntegrationForm(&f)
	return render(c, status, views.IntegrationEdit(s.shell(c, title, "integrations"), f))
}

func parseRevision(v string) (int64, error) {
	var rev int64
	if _, err := fmt.Sscan(v, &rev); err != nil || rev < 0 {
		return 0, echo.NewHTTPError(http.StatusBadRequest, "The form has no valid revision. Reload the page and try again.")
	}
	return rev, nil
}
