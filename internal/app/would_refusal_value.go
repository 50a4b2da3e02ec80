package app

import (
	"time"

	"github.com/outboundhq/outbound/models"
)

// LoggedWouldRefusal is a would-be refusal as the log shows it: a request
// that was allowed, and the refusal report-only entries would have given
// it. The log page, the CSV and `console refusals --would-refuse` (text
// and --json) all render this one value.
type LoggedWouldRefusal struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"`
	// Outcome is always DecisionWouldRefuse, so that a JSON reader can
	// tell these rows from refusals.
	Outcome string `json:"outcome"`
	Tool    string `json:"tool,omitempty"`
	// Service is the integration of a call_integration request, as a
	// refusal's service is.
	Service string `json:"service,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Ticket  string `json:"ticket,omitempty"`
	Thread  string `json:"thread,omitempty"`
	URL     string `json:"url"`
	Host    string `json:"host,omitempty"`
	Port    int    `json:"port,omitempty"`
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Proxied bool   `json:"proxied"`
}

// LoggedWouldRefusalOf is the value of a stored row.
func LoggedWouldRefusalOf(r models.WouldRefusal) LoggedWouldRefusal {
	return LoggedWouldRefusal{ID: r.ID, Time: r.Time.UTC(), Outcome: DecisionWouldRefuse, Tool: r.Tool, Service: r.Integration, Agent: r.Agent,
		Ticket: r.Ticket, Thread: r.Thread, URL: r.URL, Host: r.Host, Port: r.Port, Code: r.Code, Reason: r.Reason, Message: r.Message, Proxied: r.Proxied}
}
