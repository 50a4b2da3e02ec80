package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/views"
)

// A ticket's page is its timeline: every egress decision an agent made
// for it, allowed and refused, oldest first, each refusal linked to its
// page. Support staff reach it from the refusal log (the Ticket column, a
// refusal's page) or by typing the ticket into its lookup box.

// ticketLookup answers the lookup box: GET /tickets?ticket=X goes to X's
// page; an empty or malformed ticket shows the box again with the problem.
func (s *Server) ticketLookup(c echo.Context) error {
	ticket := strings.TrimSpace(c.QueryParam("ticket"))
	vm := views.TicketTimeline{Lookup: ticket}
	switch err := guard.CheckTicket(ticket); {
	case ticket == "" && c.QueryParams().Has("ticket"):
		vm.Problem = "Type a ticket, e.g. " + guard.TicketExample + "."
	case ticket == "":
	case err != nil:
		vm.Problem = ticketProblem(err)
	default:
		return c.Redirect(http.StatusSeeOther, ticketHref(ticket))
	}
	status := http.StatusOK
	if vm.Problem != "" {
		status = http.StatusBadRequest
	}
	return render(c, status, views.TicketPage(s.shell(c, "Tickets", "refusals"), vm))
}

// ticketTimeline serves /tickets/:id.
func (s *Server) ticketTimeline(c echo.Context) error {
	// Echo leaves a parameter escaped when the path had escapes (a "#"
	// is sent as %23); a ticket holds no "%", so unescaping is exact.
	if s.d.Tickets == nil {
		return echo.NewHTTPError(http.StatusNotFound, "Ticket timelines are not served by this console.")
	}
	ticket, err := url.PathUnescape(c.Param("id"))
	if err != nil {
		ticket = c.Param("id")
	}
	tl, err := s.d.Tickets.TicketTimeline(c.Request().Context(), ticket)
	var te *guard.TicketError
	if errors.As(err, &te) {
		vm := views.TicketTimeline{Lookup: ticket, Problem: ticketProblem(err)}
		return render(c, http.StatusNotFound, views.TicketPage(s.shell(c, "Tickets", "refusals"), vm))
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.TicketPage(s.shell(c, "Ticket "+ticket, "refusals"), ticketView(tl)))
}

func ticketProblem(err error) string {
	var te *guard.TicketError
	if errors.As(err, &te) {
		return "There is no such ticket: " + te.Message + " " + te.Fix
	}
	return err.Error()
}

// ticketView turns a timeline into the page's view model.
func ticketView(tl app.Timeline) views.TicketTimeline {
	vm := views.TicketTimeline{
		Ticket: tl.Ticket, Lookup: tl.Ticket, Truncated: tl.Truncated, RefusalDays: tl.RefusalDays, DecisionDays: tl.DecisionDays,
		RefusalsHref: "/refusals?" + url.Values{"ticket": {tl.Ticket}}.Encode(),
		Events:       make([]views.TicketEvent, len(tl.Events)),
	}
	back := url.Values{"ticket": {tl.Ticket}}.Encode()
	for i, e := range tl.Events {
		ev := views.TicketEvent{Time: e.Time, Outcome: e.Outcome, Tool: e.Tool, Agent: e.Agent, URL: e.URL, Code: e.Code, Reason: e.Reason, Redirected: e.Redirected}
		if e.Proxied {
			ev.Via = "proxy"
		}
		if e.RefusalID != 0 {
			ev.Href = detailHref(e.RefusalID, back)
		}
		switch e.Outcome {
		case app.OutcomeAllowed:
			vm.Allowed++
		case app.OutcomeFailed:
			vm.Failed++
		default:
			vm.Refused++
		}
		vm.Events[i] = ev
	}
	return vm
}
