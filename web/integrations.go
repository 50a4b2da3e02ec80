package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/views"
)

// IntegrationDeps is what the HTTP integration pages need beyond Deps:
// the box that seals header secrets, and the runner that makes the Test
// button's call through the guard.
type IntegrationDeps struct {
	Secrets *tools.SecretBox
	Runner  *tools.Integrations
}

// UseIntegrations gives the server what the integration pages need. Call
// it before the server starts serving.
func (s *Server) UseIntegrations(d IntegrationDeps) { s.integ = d }

func (s *Server) integrations() (IntegrationDeps, error) {
	if s.integ.Secrets == nil || s.integ.Runner == nil {
		return IntegrationDeps{}, echo.NewHTTPError(http.StatusServiceUnavailable, "HTTP integrations are not set up in this process.")
	}
	return s.integ, nil
}

// integrationList is read-only for support users; it never holds a
// secret value.
func (s *Server) integrationList(c echo.Context) error {
	rows, err := s.d.Store.ListIntegrations(c.Request().Context())
	if err != nil {
		return err
	}
	l := views.IntegrationList{Admin: userOf(c).admin()}
	for _, r := range rows {
		row := views.IntegrationRow{Name: r.Name, Description: r.Description, Method: r.Method, URL: r.URLTemplate,
			UpdatedBy: r.UpdatedBy, Updated: r.UpdatedAt.UTC().Format("2006-01-02 15:04 UTC")}
		for _, p := range r.Params {
			row.Params = append(row.Params, describeParam(p))
		}
		for _, h := range r.Headers {
			row.Headers = append(row.Headers, describeHeader(h))
		}
		l.Rows = append(l.Rows, row)
	}
	return render(c, http.StatusOK, views.IntegrationsPage(s.shell(c, "HTTP integrations", "integrations"), l))
}

func (s *Server) integrationNew(c echo.Context) error {
	rev, err := s.d.Store.Version(c.Request().Context(), models.SectionIntegrations)
	if err != nil {
		return err
	}
	f := newIntegrationForm()
	f.Revision = rev
	return s.renderIntegrationForm(c, http.StatusOK, f)
}

func (s *Server) integrationCreate(c echo.Context) error {
	deps, err := s.integrations()
	if err != nil {
		return err
	}
	in := readIntegrationForm(c, models.Integration{})
	in.form.New = true
	if len(in.form.Errors) > 0 {
		return s.renderIntegrationForm(c, http.StatusUnprocessableEntity, in.form)
	}
	row, err := in.seal(deps.Secrets, userOf(c).Name)
	if err != nil {
		return err
	}
	if _, err := s.d.Store.CreateIntegration(c.Request().Context(), in.form.Revision, row); err != nil {
		return s.integrationSaveFailed(c, in.form, err)
	}
	s.audit(c, models.Audit{Actor: userOf(c).Name, Action: "integration.add", Target: row.Name, After: describeIntegration(row)})
	return s.integrationSaved(c, row.Name, "Integration "+row.Name+" created. Agents can call it now.")
}

func (s *Server) integrationEdit(c echo.Context) error {
	f, _, err := s.storedIntegrationForm(c)
	if err != nil {
		return err
	}
	return s.renderIntegrationForm(c, http.StatusOK, f)
}

func (s *Server) integrationUpdate(c echo.Context) error {
	deps, err := s.integrations()
	if err != nil {
		return err
	}
	_, old, err := s.storedIntegrationForm(c)
	if err != nil {
		return err
	}
	in := readIntegrationForm(c, old)
	in.form.OriginalName = old.Name
	in.form.ConfirmRename = c.FormValue("confirm_rename") == "yes"
	if in.form.Name != old.Name && !in.form.ConfirmRename {
		if _, taken := in.form.Errors["name"]; !taken {
			in.form.Errors["name"] = renameWarning(old.Name) + " Tick Rename " + old.Name + " below to confirm."
		}
	}
	if len(in.form.Errors) > 0 {
		return s.renderIntegrationForm(c, http.StatusUnprocessableEntity, in.form)
	}
	row, err := in.seal(deps.Secrets, userOf(c).Name)
	if err != nil {
		return err
	}
	if _, err := s.d.Store.UpdateIntegration(c.Request().Context(), in.form.Revision, old.Name, row); err != nil {
		return s.integrationSaveFailed(c, in.form, err)
	}
	s.audit(c, models.Audit{Actor: userOf(c).Name, Action: "integration.update", Target: row.Name, Before: describeIntegration(old), After: describeIntegration(row)})
	msg := "Integration " + row.Name + " saved. Agents see the change now."
	if row.Name != old.Name {
		msg = "Integration " + old.Name + " renamed to " + row.Name + " and saved. Agents must call it " + row.Name + " now."
	}
	return s.integrationSaved(c, row.Name, msg)
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
	if _, err := s.d.Store.DeleteIntegration(c.Request().Context(), rev, old.Name); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return echo.NewHTTPError(http.StatusConflict, "The configuration changed while you were deciding. Open the integration again and delete it from there.")
		}
		return err
	}
	s.audit(c, models.Audit{Actor: userOf(c).Name, Action: "integration.delete", Target: old.Name, Before: describeIntegration(old)})
	if err := s.d.Reload(c.Request().Context()); err != nil {
		return err
	}
	s.flash(c, "ok", "Integration "+old.Name+" deleted. Agents no longer see it.")
	return redirect(c, "/integrations/http")
}

// integrationSaved reloads, so the running tools and MCP lists change
// now, and returns to the edit page.
func (s *Server) integrationSaved(c echo.Context, name, msg string) error {
	if err := s.d.Reload(c.Request().Context()); err != nil {
		return err
	}
	s.flash(c, "ok", msg)
	return redirect(c, "/integrations/http/"+name)
}

// integrationSaveFailed re-renders the form with the admin's input for
// a conflict or a taken name, so that nothing typed is lost.
func (s *Server) integrationSaveFailed(c echo.Context, f views.IntegrationForm, err error) error {
	switch {
	case errors.Is(err, models.ErrConflict):
		rev, rerr := s.d.Store.Version(c.Request().Context(), models.SectionIntegrations)
		if rerr != nil {
			return rerr
		}
		f.Revision = rev
		f.FormError = "Someone changed the configuration while you were editing. Your input is kept below (secret values must be typed again); check it and save again."
		return s.renderIntegrationForm(c, http.StatusConflict, f)
	case errors.Is(err, models.ErrDuplicate):
		f.Errors = map[string]string{"name": "An integration named " + f.Name + " already exists. Choose another name."}
		return s.renderIntegrationForm(c, http.StatusUnprocessableEntity, f)
	}
	return err
}

// storedIntegrationForm loads the integration named in the path.
func (s *Server) storedIntegrationForm(c echo.Context) (views.IntegrationForm, models.Integration, error) {
	ctx := c.Request().Context()
	rev, err := s.d.Store.Version(ctx, models.SectionIntegrations)
	if err != nil {
		return views.IntegrationForm{}, models.Integration{}, err
	}
	row, err := s.d.Store.IntegrationByName(ctx, c.Param("name"))
	if errors.Is(err, models.ErrNotFound) {
		return views.IntegrationForm{}, row, notFoundIn("There is no integration named "+c.Param("name")+".", "/integrations/http", "See the HTTP integrations")
	}
	if err != nil {
		return views.IntegrationForm{}, row, err
	}
	f := formFromRow(row)
	f.Revision = rev
	return f, row, nil
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

// renameWarning is what a rename costs: agents know a tool by its name.
func renameWarning(oldName string) string {
	return "Agents calling " + oldName + " will get an unknown-integration error until they use the new name."
}

// describeIntegration is the audit trail's text for an integration. It
// starts with the name, so a rename reads as one in before → after. A
// secret header shows as "(secret)", never its value, sealed or not.
func describeIntegration(r models.Integration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name %s\n%s %s", r.Name, r.Method, r.URLTemplate)
	for _, h := range r.Headers {
		b.WriteString("\nheader " + describeHeader(h))
	}
	for _, p := range r.Params {
		b.WriteString("\nparam " + describeParam(p))
	}
	if r.BodyTemplate != "" {
		b.WriteString("\nbody " + r.BodyTemplate)
	}
	b.WriteString("\ndescription " + r.Description)
	return b.String()
}

func describeHeader(h models.IntegrationHeader) string {
	if h.Secret {
		return h.Name + ": (secret)"
	}
	return h.Name + ": " + h.Value
}

func describeParam(p models.IntegrationParam) string {
	s := p.Name + " (" + p.Type
	if p.Required {
		s += ", required"
	}
	return s + ")"
}
