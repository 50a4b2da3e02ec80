package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// The refusal log's second outcome, "would refuse": requests that were
// allowed, but that report-only allowlist entries would have refused. An
// admin reads them before pressing Enforce, with the log's own filters
// (agent, tool or integration, host, ticket, time, search), its keyset
// pages and its CSV export. They are never mixed with refusals: they were
// allowed, so they have no review, and they count toward nothing else.

// wouldCarried are the filters both outcomes share, which the tabs carry
// from one outcome to the other.
var wouldCarried = []string{"tool", "agent", "host", "from", "to", "ticket", "q"}

// outcomeHref links to the log's outcome view with the shared filters.
func (f refusalFilter) outcomeHref(outcome string) string {
	v := url.Values{}
	for _, k := range wouldCarried {
		if x := f.applied.Get(k); x != "" {
			v.Set(k, x)
		}
	}
	if outcome != "" {
		v.Set("outcome", outcome)
	}
	if len(v) == 0 {
		return "/refusals"
	}
	return "/refusals?" + v.Encode()
}

// toolOptions is the tool menu: the tools refused, then one entry per
// integration refused (integration:NAME).
func toolOptions(f models.RefusalFacets) []string {
	out := slices.Clone(f.Tools)
	for _, name := range f.Integrations {
		out = append(out, integrationTool+name)
	}
	return out
}

// wouldRefusalLog renders the would-refuse view: the summary the card
// shows, then one page of would-be refusals matching the filters.
func (s *Server) wouldRefusalLog(c echo.Context, f refusalFilter, vm views.RefusalLog) error {
	ctx := c.Request().Context()
	since := s.d.Now().UTC().AddDate(0, 0, -app.WouldRefuseDays)
	counts, err := s.d.Store.CountWouldRefusals(ctx, since)
	if err != nil {
		return err
	}
	vm.Would = &views.WouldRefuseLog{Summary: fmt.Sprintf("%s from %s in the last %d days would have been refused once the report-only entries are enforced. They were allowed.",
		plural(int(counts.Requests), "request", "requests"), plural(int(counts.Agents), "agent", "agents"), app.WouldRefuseDays)}
	if vm.Admin {
		vm.Would.EnforceHref = "/integrations"
	}
	vm.CSVHref = f.href("/refusals.csv")
	facets, err := s.d.Store.WouldRefusalValues(ctx)
	if err != nil {
		return err
	}
	vm.Filter.Tools, vm.Filter.Agents = toolOptions(facets), facets.Agents
	title := "Would refuse (report-only)"
	if !f.ok() {
		bad, noun := f.badFields(), "filter is fixed: see the message next to it above, or clear it."
		if len(bad) > 1 {
			noun = "filters are fixed: see the message next to each above, or clear them."
		}
		vm.FilterProblem = "No would-be refusals are shown until the " + joinAnd(bad) + " " + noun
		return render(c, http.StatusBadRequest, views.RefusalLogPage(s.shell(c, title, "refusals"), vm))
	}
	before, _, problem := parseCursor(c.QueryParams())
	vm.CursorError = problem
	q := f.query
	q.BeforeID = before
	rows, next, err := s.d.Store.ListWouldRefusals(ctx, q)
	if err != nil {
		return err
	}
	if next != 0 {
		vm.OlderHref = f.href("/refusals", "before", strconv.FormatInt(next, 10))
		if (q.Search != "" || (q.Host != "" && !q.HostExact)) && len(rows) < models.DefaultRefusalPage {
			vm.SearchNote = "This page searched the would-be refusals down to number " + strconv.FormatInt(next, 10) + "; Older › searches the ones before it."
		}
	}
	if before != 0 {
		vm.FirstHref = f.href("/refusals")
	}
	vm.Would.Rows = make([]views.WouldRefusalRow, len(rows))
	for i, r := range rows {
		v := app.LoggedWouldRefusalOf(r)
		vm.Would.Rows[i] = views.WouldRefusalRow{ID: v.ID, Time: v.Time, Tool: v.Tool, Integration: v.Service, Agent: v.Agent,
			Ticket: v.Ticket, TicketHref: ticketHref(v.Ticket), Host: v.Host, URL: v.URL, Code: v.Code, Reason: v.Reason, Message: v.Message}
	}
	return render(c, http.StatusOK, views.RefusalLogPage(s.shell(c, title, "refusals"), vm))
}

// wouldRefusalCSVHeader names the would-refuse export's columns.
var wouldRefusalCSVHeader = []string{"id", "time_utc", "outcome", "tool", "integration", "proxied", "agent", "thread", "ticket", "url", "host", "port", "code", "reason", "message"}

func wouldRefusalCSVRecord(r app.LoggedWouldRefusal) []string {
	rec := []string{strconv.FormatInt(r.ID, 10), r.Time.UTC().Format(time.RFC3339), r.Outcome, r.Tool, r.Service, strconv.FormatBool(r.Proxied),
		r.Agent, r.Thread, r.Ticket, r.URL, r.Host, strconv.Itoa(r.Port), r.Code, r.Reason, r.Message}
	for i := range rec {
		rec[i] = spreadsheetSafe(rec[i])
	}
	return rec
}
