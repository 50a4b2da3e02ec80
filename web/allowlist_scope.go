package web

// Scopes, internal hosts, report-only entries and access requests on the
// Outbound web access card. The operations live in internal/app; these
// handlers parse the forms and render the typed answers.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// ScopeService is the scope operations the card offers. *app.App
// implements it; a ConfigService that does not (a test's fake) gets the
// card without them.
type ScopeService interface {
	EnforceEntries(ctx context.Context, req app.EnforceEntries) (app.EntriesEnforced, error)
	WouldRefuse(ctx context.Context) (app.WouldRefuseSummary, error)
	AccessRequests(ctx context.Context, pending bool) ([]models.AccessRequest, error)
	RequestAccess(ctx context.Context, req app.RequestAccess) (models.AccessRequest, error)
	ApproveAccess(ctx context.Context, req app.ApproveAccess) (app.EntriesAdded, error)
	DeclineAccess(ctx context.Context, id int64, actor, reason string) error
	ScopeTools(ctx context.Context) []string
	AllowIntegrationHost(ctx context.Context, name, rawURL, actor string) (app.EntriesAdded, error)
}

func (s *Server) scopeOps() (ScopeService, bool) {
	svc, ok := s.d.Config.(ScopeService)
	return svc, ok
}

// scopeFromForm reads a comma-separated agents and tools pair.
func scopeFromForm(agents, tools string) guard.Scope {
	split := func(v string) []string {
		var out []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	return guard.Scope{Agents: split(agents), Tools: split(tools)}.Normalized()
}

// rowView fills the scope part of a card row.
func rowView(r models.AllowlistEntry) (who, agents, tools string) {
	sc := app.ScopeOf(r)
	agents, tools = strings.Join(sc.Agents, ", "), strings.Join(sc.Tools, ", ")
	if !sc.IsZero() {
		who = sc.String()
	}
	return who, agents, tools
}

// fillScopeCard adds the would-be refusal count and, for admins, the
// pending access requests to the card.
func (s *Server) fillScopeCard(c echo.Context, st allowlistState, p *views.EgressPage) error {
	svc, ok := s.scopeOps()
	if !ok {
		return nil
	}
	ctx := c.Request().Context()
	if p.Form != nil {
		p.Form.ToolNames = svc.ScopeTools(ctx)
	}
	if hasReportOnly(st) {
		sum, err := svc.WouldRefuse(ctx)
		if err != nil {
			return err
		}
		p.Card.Extra.WouldRefuse = fmt.Sprintf("%s from %s in the last %d days would have been refused by the report-only entries.",
			plural(int(sum.Requests), "request", "requests"), plural(int(sum.Agents), "agent", "agents"), sum.Days)
	}
	if !userOf(c).admin() {
		return nil
	}
	reqs, err := svc.AccessRequests(ctx, true)
	if err != nil {
		return err
	}
	for _, r := range reqs {
		p.Card.Extra.Pending = append(p.Card.Extra.Pending, views.AccessRequestView{ID: r.ID, RefusalID: r.RefusalID, Entry: r.Entry,
			Agents: r.Agent, Tools: r.Tool, Internal: r.Internal, Comment: r.Comment, RequestedBy: r.RequestedBy, At: r.CreatedAt})
	}
	return nil
}

func hasReportOnly(st allowlistState) bool {
	for _, r := range st.Rows {
		if r.ReportOnly {
			return true
		}
	}
	return false
}

func (s *Server) enforceAllowlist(c echo.Context) error {
	svc, ok := s.scopeOps()
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	formRev, err := formRevision(c)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.FormValue("id"), 10, 64)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form did not name the entry to enforce. Reload Integrations and press Enforce again.")
	}
	ctx := c.Request().Context()
	res, err := svc.EnforceEntries(ctx, app.EnforceEntries{IDs: []int64{id}, Actor: userOf(c).Name, Version: formRev})
	var notReloaded *app.NotReloadedError
	switch {
	case errors.Is(err, models.ErrConflict) || errors.Is(err, models.ErrNotFound) || isAppConflictOrMissing(err):
		st, lerr := s.loadAllowlist(ctx)
		if lerr != nil {
			return lerr
		}
		return s.removeRefused(c, st, http.StatusConflict, "The allowlist changed after your page was loaded, or the entry is no longer report-only. Nothing was changed. The list below is current.")
	case err != nil && !errors.As(err, &notReloaded):
		return err
	}
	msg := "Enforced."
	if len(res.Enforced) > 0 {
		msg = "Enforced " + app.RowText(res.Enforced[0]) + "."
	}
	for _, m := range res.Modes {
		if w := m.Sentence(); w != "" {
			msg += " " + w
		}
	}
	return s.savedAndReturn(c, msg, notReloaded)
}

func isAppConflictOrMissing(err error) bool {
	var conflict *app.ConflictError
	var nf *app.NotFoundError
	return errors.As(err, &conflict) || errors.As(err, &nf)
}

// wouldRefusalsPage is where the card's "See them" pointed before the
// refusal log showed would-be refusals itself: old links and bookmarks
// land on the log's would-refuse view, of the same agent.
func (s *Server) wouldRefusalsPage(c echo.Context) error {
	q := url.Values{"outcome": {outcomeWouldRefuse}}
	if agent := strings.TrimSpace(c.QueryParam("agent")); agent != "" {
		q.Set("agent", agent)
	}
	return c.Redirect(http.StatusMovedPermanently, "/refusals?"+q.Encode())
}

// accessForm is the refusal page's Request access form: shown when an
// entry would fix the refusal and its review is still open.
func (s *Server) accessForm(c echo.Context, v app.LoggedRefusal) *views.RequestAccessForm {
	if _, ok := s.scopeOps(); !ok || v.Remedy.Kind != guard.RemedyAddEntry {
		return nil
	}
	return &views.RequestAccessForm{RefusalID: v.ID, Entry: v.Remedy.Entry, Integration: v.Service, Filed: v.Status == string(models.StatusNeedsAccess)}
}

func (s *Server) requestAccess(c echo.Context) error {
	svc, ok := s.scopeOps()
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	ctx := c.Request().Context()
	id, err := strconv.ParseInt(c.FormValue("refusal"), 10, 64)
	if err != nil || id <= 0 {
		return echo.NewHTTPError(http.StatusBadRequest, "The form did not name a refusal. Open Request access from a refusal in the Refusal log.")
	}
	comment := c.FormValue("comment")
	_, err = svc.RequestAccess(ctx, app.RequestAccess{RefusalID: id, Comment: comment, Actor: userOf(c).Name})
	var problems app.ReviewProblems
	var invalid *app.ValidationError
	msg := ""
	switch {
	case errors.As(err, &problems):
		msg = problems["comment"]
	case errors.As(err, &invalid):
		msg = invalid.Problems[0].Text()
	case errors.Is(err, models.ErrDuplicate):
		msg = "An access request for this refusal is already waiting for an admin."
	case err != nil:
		return err
	}
	if msg != "" {
		r, err := s.d.Store.RefusalByID(ctx, id)
		if err != nil {
			return err
		}
		vm := s.detailView(c, r, "")
		vm.Review.Status, vm.Review.Comment = string(r.Status), r.Comment
		if vm.Access != nil {
			vm.Access.Comment, vm.Access.Error = comment, msg
		}
		return render(c, http.StatusUnprocessableEntity, views.RefusalDetailPage(s.shell(c, "Refusal "+strconv.FormatInt(id, 10), "refusals"), vm))
	}
	s.flash(c, "ok", "Access requested. An admin sees the request on the Outbound web access card.")
	return redirect(c, "/refusals/"+strconv.FormatInt(id, 10))
}

func (s *Server) approveAccess(c echo.Context) error {
	svc, ok := s.scopeOps()
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	id, err := accessRequestID(c)
	if err != nil {
		return err
	}
	formRev, err := formRevision(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	res, err := svc.ApproveAccess(ctx, app.ApproveAccess{ID: id, Entry: c.FormValue("entry"), Scope: scopeFromForm(c.FormValue("agents"), c.FormValue("tools")),
		Internal: c.FormValue("internal") == "yes", Actor: userOf(c).Name, Version: formRev})
	var notReloaded *app.NotReloadedError
	var invalid *app.ValidationError
	switch {
	case errors.As(err, &invalid):
		return s.accessNotice(c, http.StatusUnprocessableEntity, "The access request was not approved: "+invalid.Error())
	case isAppConflictOrMissing(err) || errors.Is(err, models.ErrNotFound):
		return s.accessNotice(c, http.StatusConflict, "The access request was not approved: the list or the request changed after your page was loaded. The card below is current.")
	case err != nil && !errors.As(err, &notReloaded):
		return err
	}
	msg := fmt.Sprintf("Approved access request #%d: added %s.", id, strings.Join(entryTexts(res.Added), ", "))
	if w := res.Mode.Sentence(); w != "" {
		msg += " " + w
	}
	return s.savedAndReturn(c, msg, notReloaded)
}

func entryTexts(es []guard.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}

func (s *Server) declineAccess(c echo.Context) error {
	svc, ok := s.scopeOps()
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound)
	}
	id, err := accessRequestID(c)
	if err != nil {
		return err
	}
	err = svc.DeclineAccess(c.Request().Context(), id, userOf(c).Name, c.FormValue("reason"))
	var problems app.ReviewProblems
	switch {
	case errors.As(err, &problems):
		return s.accessNotice(c, http.StatusUnprocessableEntity, "The access request was not declined: "+problems["comment"])
	case errors.Is(err, models.ErrNotFound):
		return s.accessNotice(c, http.StatusConflict, "That access request was already decided. The card below is current.")
	case err != nil:
		return err
	}
	s.flash(c, "ok", fmt.Sprintf("Declined access request #%d; the refusal's review is closed as expected.", id))
	return redirect(c, "/integrations")
}

func (s *Server) accessNotice(c echo.Context, status int, notice string) error {
	st, err := s.loadAllowlist(c.Request().Context())
	if err != nil {
		return err
	}
	return s.removeRefused(c, st, status, notice)
}

// allowIntegrationHost adds the integration's host for it alone when the
// admin ticked the box, and returns the sentence that says what happened.
func (s *Server) allowIntegrationHost(c echo.Context, ticked bool, name, rawURL string) string {
	svc, ok := s.scopeOps()
	if !ticked || !ok {
		return ""
	}
	res, err := svc.AllowIntegrationHost(c.Request().Context(), name, rawURL, userOf(c).Name)
	var notReloaded *app.NotReloadedError
	switch {
	case err != nil && !errors.As(err, &notReloaded):
		return " The host was not allowed: " + err.Error() + "."
	case len(res.Added) > 0:
		return " " + res.Added[0].String() + " is now an internal host for " + name + " alone; agents keep the public web."
	case len(res.AlreadyListed) > 0:
		return " " + res.AlreadyListed[0].String() + " was already allowed for " + name + "."
	}
	return ""
}

// accessRequestID reads the access request number from the path.
func accessRequestID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return 0, echo.NewHTTPError(http.StatusBadRequest, "That is not an access request number.")
	}
	return id, nil
}
