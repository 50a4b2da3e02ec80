package web

import (
	"errors"
	"net/url"
	"strconv"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// Support staff find a ticket's refusals by its id, and search the log's
// URLs and messages for anything else they were told ("the CRM link",
// "a timeout"). Both are filters like the others: in the form, in the
// link, in the CSV.

// parseTicketAndSearch reads the ticket and search filters.
func (f *refusalFilter) parseTicketAndSearch(ticket, search string) {
	f.form.Ticket, f.form.Search = ticket, search
	if ticket != "" {
		if err := guard.CheckTicket(ticket); err != nil {
			var te *guard.TicketError
			errors.As(err, &te)
			f.form.Errors["ticket"] = te.Message + " " + te.Fix
		} else {
			f.query.Ticket = ticket
			f.applied.Set("ticket", ticket)
		}
	}
	if search != "" {
		if _, err := models.SearchWords(search); err != nil {
			f.form.Errors["q"] = tools.Sentence(err.Error())
		} else {
			f.query.Search = search
			f.applied.Set("q", search)
		}
	}
}

// ticketHref is a ticket's timeline page.
func ticketHref(ticket string) string {
	if ticket == "" {
		return ""
	}
	return "/tickets/" + url.PathEscape(ticket)
}

// shownThread is the thread a person may read beside a refusal: the one
// an agent named, never an MCP session's opaque id.
func shownThread(thread string) string {
	if tools.SessionThread(thread) {
		return ""
	}
	return thread
}

// searchNote explains a search page that ended at its window rather than
// filling up: the older refusals are searched on the next page.
func searchNote(q models.RefusalQuery, shown int, next int64) string {
	limit := q.Limit
	if limit == 0 {
		limit = models.DefaultRefusalPage
	}
	if q.Search == "" || shown >= limit {
		return ""
	}
	return "This page searched the refusals down to number " + strconv.FormatInt(next, 10) + "; Older › searches the ones before it."
}
