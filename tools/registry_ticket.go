package tools

// Every tool takes an optional "ticket": the help-desk ticket the call
// serves, so support staff can find every decision of one ticket in the
// refusal log and on its timeline. The registry adds it to every tool's
// listed schema and takes it out of the input before the tool sees it, so
// a tool (built in, an integration, a browser tool to come) needs no code
// for it. A tool whose own schema already has a "ticket" parameter (an
// integration that looks tickets up, say) keeps it as its own: the call's
// ticket then comes from the transport (X-Outbound-Ticket) alone.

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/outboundhq/outbound/guard"
)

// TicketArg is the input field every tool takes the ticket in.
const TicketArg = "ticket"

// TicketDescription is how every tool's schema describes TicketArg.
const TicketDescription = "Optional: the help-desk ticket this call serves, e.g. " + guard.TicketExample + ". Support staff find the call under it."

// ownsTicket reports whether the tool's own input has a ticket parameter.
func (t *Tool) ownsTicket() bool {
	if t.Schema == nil {
		return false
	}
	_, ok := t.Schema.Properties[TicketArg]
	return ok
}

// listedSchema is t's schema as clients see it: with TicketArg added,
// unless the tool has a ticket parameter of its own. The tool's value is
// never changed; a copy is returned.
func (t *Tool) listedSchema() *jsonschema.Schema {
	if t.ownsTicket() {
		return t.Schema
	}
	s := &jsonschema.Schema{Type: "object"}
	if t.Schema != nil {
		c := *t.Schema
		s = &c
	}
	s.Properties = maps.Clone(s.Properties)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	s.Properties[TicketArg] = text(TicketDescription, guard.MaxTicketLen)
	return s
}

// takeTicket removes TicketArg from args and returns it, checked. null
// and "" mean no ticket.
func takeTicket(args map[string]json.RawMessage) (string, error) {
	raw, ok := args[TicketArg]
	if !ok {
		return "", nil
	}
	delete(args, TicketArg)
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return "", nil
	}
	var ticket string
	if json.Unmarshal(raw, &ticket) != nil {
		return "", &InputError{Message: "The field ticket must be a string.", Fix: `Send the ticket as a string, e.g. "ticket": "` + guard.TicketExample + `".`}
	}
	if err := guard.CheckTicket(ticket); err != nil {
		te := err.(*guard.TicketError)
		return "", &InputError{Message: te.Message, Fix: te.Fix}
	}
	return ticket, nil
}

// ticketInputError words a malformed ticket that came in a transport's
// header rather than in the input.
func ticketInputError(err error) *InputError {
	te, ok := err.(*guard.TicketError)
	if !ok {
		return &InputError{Message: err.Error(), Fix: "Send a ticket such as " + guard.TicketExample + "."}
	}
	return &InputError{Message: "The " + guard.TicketHeader + " header is not a ticket: " + te.Message, Fix: te.Fix}
}
