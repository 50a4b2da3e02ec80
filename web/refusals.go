package web

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/views"
)

// The refusal log is where support staff see what the guard refused, review
// it, and share or export a filtered view. Every route is open to support
// and admins alike: reviewing is support's job, and the one admin-only
// action, allowing a host, lives on the allowlist page this log links to.
// topHostsShown is how many of today's most refused hosts the counters show.
const topHostsShown = 5

func (s *Server) refusalLog(c echo.Context) error {
	if done, err := redirectEmptyParams(c); done {
		return err
	}
	ctx := c.Request().Context()
	in := c.QueryParams()
	f := parseRefusalFilter(in)
	vm := views.RefusalLog{Admin: userOf(c).admin(), Filtered: f.filtered(), CSVHref: f.href("/refusals.csv")}
	if s.d.Settings != nil {
		vm.RetentionDays = s.d.Settings().RetentionDays
	}
	vm.WriterNotice = writersNotice(s.logWriterStates())
	vm.Outcome, vm.RefusedHref, vm.WouldHref = f.form.Outcome, f.outcomeHref(""), f.outcomeHref(outcomeWouldRefuse)
	f.form.Kinds = kindOptions
	if f.would {
		// Its own menus and summary: the refusals' counters and facets
		// would be read only to be thrown away.
		f.form.Codes = codeOptions(nil)
		vm.Filter = f.form
		return s.wouldRefusalLog(c, f, vm)
	}
	if err := s.refusalCounters(c, &vm); err != nil {
		return err
	}
	facets, err := s.facets.get(ctx, vm.TodayCount, s.d.Now(), s.d.Store.RefusalValues)
	if err != nil {
		return err
	}
	f.form.Codes, f.form.Reasons, f.form.Tools, f.form.Agents = codeOptions(facets.Codes), facets.Reasons, toolOptions(facets), facets.Agents
	vm.Filter = f.form
	if !f.ok() {
		// No rows at all rather than the rows the valid filters select: a
		// mistyped filter must not pass for "everything" under a heading
		// that says so. The status tells scripts the link was wrong.
		bad, noun := f.badFields(), "filter is fixed: see the message next to it above, or clear it."
		if len(bad) > 1 {
			noun = "filters are fixed: see the message next to each above, or clear them."
		}
		vm.FilterProblem = "No refusals are shown until the " + joinAnd(bad) + " " + noun
		return render(c, http.StatusBadRequest, views.RefusalLogPage(s.shell(c, "Refusal log", "refusals"), vm))
	}

	before, after, problem := parseCursor(in)
	vm.CursorError = problem
	q := f.query
	q.BeforeID = before
	var rows []models.Refusal
	newer := before != 0
	if after != 0 {
		rows, newer, err = s.d.Store.ListRefusalsAfter(ctx, q, after)
	} else {
		var next int64
		rows, next, err = s.d.Store.ListRefusals(ctx, q)
		if next != 0 {
			vm.OlderHref = f.href("/refusals", "before", strconv.FormatInt(next, 10))
			vm.SearchNote = searchNote(q, len(rows), next)
		}
	}
	if err != nil {
		return err
	}
	if after != 0 && len(rows) > 0 {
		// The page we came from lies below this one, so there is an older
		// page unless those rows were purged meanwhile; ask rather than guess.
		// A search reads a window at a time: an empty window below this page
		// returns no rows but a cursor when older refusals remain to search.
		last := rows[len(rows)-1].ID
		oq := f.query
		oq.BeforeID, oq.Limit = last, 1
		older, next, err := s.d.Store.ListRefusals(ctx, oq)
		if err != nil {
			return err
		}
		if len(older) > 0 || next != 0 {
			vm.OlderHref = f.href("/refusals", "before", strconv.FormatInt(last, 10))
		}
	}
	if newer && len(rows) > 0 {
		vm.NewerHref = f.href("/refusals", "after", strconv.FormatInt(rows[0].ID, 10))
	}
	if after != 0 && len(rows) == 0 && newer {
		// A search's Newer page read its window and found nothing, with
		// newer rows beyond it (an Older page can come from far below,
		// through the search index): the way on, and the way back.
		if w := s.d.Store.NewerWindow(q); w > 0 {
			top := after + w
			vm.NewerHref = f.href("/refusals", "after", strconv.FormatInt(top, 10))
			vm.OlderHref = f.href("/refusals", "before", strconv.FormatInt(after+1, 10))
			vm.SearchNote = "No refusals numbered " + strconv.FormatInt(after+1, 10) + " to " + strconv.FormatInt(top, 10) +
				" match; Newer ‹ searches the ones after them."
		}
	}
	if before != 0 || after != 0 {
		vm.FirstHref = f.href("/refusals")
	}
	back := f.applied.Encode()
	vm.Back = back
	vm.Rows = make([]views.RefusalRow, len(rows))
	for i, r := range rows {
		v := app.LoggedRefusalOf(r)
		vm.Rows[i] = views.RefusalRow{
			ID: v.ID, Href: detailHref(v.ID, back), Time: v.Time, Tool: v.Tool, Integration: v.Service, Agent: v.Agent, Host: shownHost(v),
			Code: string(v.Code), Reason: string(v.Reason), Kind: string(v.KindOf()), URL: v.URL, Status: v.Status,
			Ticket: v.Ticket, TicketHref: ticketHref(v.Ticket), Thread: shownThread(v.Thread), Redirected: v.Redirected(),
			Count: v.Count, LastTime: lastTimeOf(v),
		}
	}
	return render(c, http.StatusOK, views.RefusalLogPage(s.shell(c, "Refusal log", "refusals"), vm))
}

// refusalCounters fills today's count and most refused hosts. "Today" is
// the UTC day, the same day every viewer sees.
func (s *Server) refusalCounters(c echo.Context, vm *views.RefusalLog) error {
	ctx := c.Request().Context()
	now := s.d.Now().UTC()
	vm.Today = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	n, err := s.d.Store.CountRefusalsSince(ctx, vm.Today)
	if err != nil {
		return err
	}
	vm.TodayCount = n
	// TopRefusedHosts leaves out refusals without a host (malformed URLs).
	tops, err := s.topHosts.get(ctx, vm.Today, topHostsShown, n, now, func(ctx context.Context) ([]models.HostCount, error) {
		return s.d.Store.TopRefusedHosts(ctx, vm.Today, topHostsShown)
	})
	if err != nil {
		return err
	}
	for _, h := range tops {
		link := refusalFilter{applied: map[string][]string{"host": {`"` + h.Host + `"`}, "from": {vm.Today.Format("2006-01-02T15:04")}}}
		vm.TopHosts = append(vm.TopHosts, views.HostLink{Host: h.Host, Count: h.Count, Href: link.href("/refusals")})
	}
	return nil
}

// codeOptions is every guard code, so the menu is complete before the log
// has seen each kind, plus any unknown code that older rows carry.
func codeOptions(seen []string) []string {
	out := make([]string, 0, len(guard.Codes)+len(seen))
	for _, c := range guard.Codes {
		out = append(out, string(c))
	}
	for _, c := range seen {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// detailHref links to a refusal, carrying the log's filters so that "back"
// returns to the same view.
func detailHref(id int64, back string) string {
	h := "/refusals/" + strconv.FormatInt(id, 10)
	if back != "" {
		h += "?" + back
	}
	return h
}

// refusalFromPath reads :id and loads that refusal, or answers 404.
func (s *Server) refusalFromPath(c echo.Context) (models.Refusal, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return models.Refusal{}, echo.NewHTTPError(http.StatusNotFound, "There is no refusal "+c.Param("id")+"; refusal IDs are positive numbers. Open it from the refusal log.")
	}
	r, err := s.d.Store.RefusalByID(c.Request().Context(), id)
	if errors.Is(err, models.ErrNotFound) {
		return models.Refusal{}, echo.NewHTTPError(http.StatusNotFound, "Refusal "+strconv.FormatInt(id, 10)+" does not exist; it may have been purged by the retention setting.")
	}
	return r, err
}

// backQuery keeps only the log's filter parameters from a query string, so
// the "back" link can never be pointed anywhere else.
func backQuery(raw string) string {
	in, err := url.ParseQuery(raw)
	if err != nil {
		return ""
	}
	return parseRefusalFilter(in).applied.Encode()
}

func (s *Server) refusalDetail(c echo.Context) error {
	r, err := s.refusalFromPath(c)
	if err != nil {
		return err
	}
	back := parseRefusalFilter(c.QueryParams()).applied.Encode()
	vm := s.detailView(c, r, back)
	vm.Review.Status, vm.Review.Comment = string(r.Status), r.Comment
	return render(c, http.StatusOK, views.RefusalDetailPage(s.shell(c, "Refusal "+strconv.FormatInt(r.ID, 10), "refusals"), vm))
}

// detailView turns a stored refusal into the detail page's view model.
func (s *Server) detailView(c echo.Context, r models.Refusal, back string) views.RefusalDetail {
	v := app.LoggedRefusalOf(r)
	vm := views.RefusalDetail{
		ID: v.ID, Time: v.Time, URL: v.URL, Host: v.Host, Port: int(v.Port),
		Addresses: addrTexts(v.Addresses), Redirects: v.Redirects,
		Code: string(v.Code), Reason: string(v.Reason), Kind: string(v.KindOf()), Message: v.Message, Fix: v.Fix,
		Remedy: tools.RemedyText(v.Remedy), Entry: v.Entry,
		Tool: v.Tool, Integration: v.Service, Agent: v.Agent, Thread: v.Thread, Trigger: v.Trigger, Via: viaText(v.Proxied, v.Tool),
		Ticket: v.Ticket, TicketHref: ticketHref(v.Ticket), SessionThread: tools.SessionThread(v.Thread), Redirected: v.Redirected(),
		Count: v.Count, LastTime: lastTimeOf(v),
		Status: v.Status, Comment: v.Comment, ReviewedBy: v.ReviewedBy,
		BackHref: "/refusals",
		Review: views.RefusalReviewForm{
			Action: "/refusals/" + strconv.FormatInt(v.ID, 10) + "/review", Back: back,
			MaxComment: app.MaxReviewComment, Errors: map[string]string{},
		},
	}
	if back != "" {
		vm.BackHref += "?" + back
	}
	if v.ReviewedAt != nil {
		vm.ReviewedAt = *v.ReviewedAt
	}
	// The refusal's remedy alone says whether an entry would help: a
	// timeout, a malformed URL or a metadata endpoint has none.
	if userOf(c).admin() && v.Remedy.Kind == guard.RemedyAddEntry {
		vm.AllowHref = "/integrations/allow?refusal=" + strconv.FormatInt(v.ID, 10)
	}
	vm.Access = s.accessForm(c, v)
	vm.PreviewHref = previewLinkFor(&v.Refusal)
	return vm
}

// addrTexts writes addresses for display.
func addrTexts(addrs []netip.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

// shownHost is the Host column's text. The guard records no host for a
// URL it refused before naming one (ftp://10.0.0.9/, http://2130706433/),
// but the URL's own host text still tells support what was asked for.
// The column shows a dash only when the URL has no host at all.
func shownHost(r app.LoggedRefusal) string {
	if r.Host != "" {
		return r.Host
	}
	if u, err := url.Parse(r.URL); err == nil {
		return u.Hostname()
	}
	return ""
}

// viaText says how the refused request was made: the tool call itself, or
// a request through a proxy. For a screenshot, a proxied row is one of the
// page's own loads (an image, a frame, a redirect), beside the call's row.
func viaText(proxied bool, tool string) string {
	switch {
	case !proxied:
		return "the tool call"
	case tool == tools.TakeScreenshotName:
		return "a request of the page, through the screenshot's proxy"
	case tools.IsBrowserTool(tool):
		return "a request of the page, through the conversation's browser proxy"
	}
	return "a request through the proxy"
}

// lastTimeOf is the time of the last refusal an aggregated row stands
// for; zero for a single one.
func lastTimeOf(v app.LoggedRefusal) time.Time {
	if v.LastTime == nil {
		return time.Time{}
	}
	return *v.LastTime
}
