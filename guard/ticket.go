package guard

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A caller may say which help-desk ticket a request serves, so that
// support staff can later find every request of one ticket. The ticket is
// the caller's own word, shown to people and used as a filter: it is
// bounded and limited to the characters ticket numbers are written with,
// so it can never smuggle markup, control characters or a second header
// into a page, a log line or a link.

// TicketHeader is the request header a proxy client (or an HTTP transport
// built on the guard) names its ticket with. The proxy reads it from the
// client and never forwards it to the target.
const TicketHeader = "X-Outbound-Ticket"

// MaxTicketLen is the longest ticket accepted, in characters.
const MaxTicketLen = 64

// TicketExample is a ticket as the fix of a rejected one shows it.
const TicketExample = "SUP-4521"

// ticketPunct are the characters besides ASCII letters and digits a ticket
// may hold: enough for "SUP-4521", "#4521", "INC0012345", "zd:4521",
// "case_77.2" and "ops+4521@desk".
const ticketPunct = "-_.:#@+"

// TicketError is a ticket that cannot be accepted: what is wrong with it,
// and how to write it instead.
type TicketError struct {
	Message string
	Fix     string
}

func (e *TicketError) Error() string { return e.Message }

// CheckTicket accepts "" (no ticket) and tickets of at most MaxTicketLen
// ASCII letters, digits and the characters - _ . : # @ +.
func CheckTicket(t string) error {
	if n := utf8.RuneCountInString(t); n > MaxTicketLen {
		return &TicketError{Message: fmt.Sprintf("The ticket has %d characters, over the limit of %d.", n, MaxTicketLen), Fix: ticketFix}
	}
	for _, r := range t {
		if !ticketRune(r) {
			return &TicketError{Message: fmt.Sprintf("The ticket holds %q, which a ticket may not contain.", r), Fix: ticketFix}
		}
	}
	return nil
}

// ticketFix says how to write a ticket. Built once: CheckTicket runs on
// every tool call, nearly always on a good ticket or none.
var ticketFix = fmt.Sprintf("Write the ticket as the help desk numbers it, e.g. %s: at most %d letters, digits and %s.", TicketExample, MaxTicketLen, strings.Join(strings.Split(ticketPunct, ""), " "))

func ticketRune(r rune) bool {
	return r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(ticketPunct, r))
}
