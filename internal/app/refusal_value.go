package app

import (
	"net/netip"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// LoggedRefusal is a refusal as the log holds it: the guard's value, whole
// and typed, with its place in the log, the conversation it came from and
// its review. The refusal pages, the CSV and `console refusals` (text and
// --json) all render this one value; none of them reads a stored column
// on its own or splits stored text.
type LoggedRefusal struct {
	ID   int64     `json:"id"`
	Time time.Time `json:"time"`
	guard.Refusal
	// Proxied marks a request refused at the proxy, as opposed to a tool
	// call: a refused screenshot navigation is both, one row each.
	Proxied    bool       `json:"proxied"`
	Thread     string     `json:"thread,omitempty"`
	Ticket     string     `json:"ticket,omitempty"`
	Trigger    string     `json:"trigger,omitempty"`
	Status     string     `json:"status,omitempty"`
	Comment    string     `json:"comment,omitempty"`
	ReviewedBy string     `json:"reviewed_by,omitempty"`
	ReviewedAt *time.Time `json:"reviewed_at,omitempty"`
	// Count is how many alike refusals the row stands for: 1, or a burst
	// the log aggregated, whose last was at LastTime.
	Count    int64      `json:"count"`
	LastTime *time.Time `json:"last_time,omitempty"`
}

// LoggedRefusalOf turns a stored row back into the typed value it was
// written from. Kind is always set, policy or network, so the JSON says it.
func LoggedRefusalOf(r models.Refusal) LoggedRefusal {
	kind := guard.Kind(r.Kind)
	if kind == "" {
		kind = guard.KindPolicy
	}
	out := LoggedRefusal{
		ID: r.ID, Time: r.Time.UTC(),
		Refusal: guard.Refusal{
			Code: guard.Code(r.Code), Reason: guard.Reason(r.Reason), Message: r.Message, Fix: r.Fix,
			Remedy: remedyOfRow(r), Kind: kind,
			Tool: r.Tool, Agent: r.Agent, Service: r.Integration, URL: r.URL, Host: r.Host, Port: uint16(r.Port), Entry: r.Entry,
			Addresses: addrsOf(r.Addresses), Redirects: []string(r.Redirects),
		},
		Proxied: r.Proxied, Thread: r.Thread, Ticket: r.Ticket, Trigger: r.Trigger, Status: string(r.Status), Comment: r.Comment,
		ReviewedBy: r.ReviewedBy, ReviewedAt: r.ReviewedAt, Count: max(r.Count, 1),
	}
	if r.LastTime != nil {
		t := r.LastTime.UTC()
		out.LastTime = &t
	}
	if out.ReviewedAt != nil {
		t := out.ReviewedAt.UTC()
		out.ReviewedAt = &t
	}
	return out
}

// addrsOf parses stored addresses; the guard wrote them, so each parses.
// One that does not (a hand-edited database) is left out rather than
// shown as something it is not.
func addrsOf(texts []string) []netip.Addr {
	if len(texts) == 0 {
		return nil
	}
	out := make([]netip.Addr, 0, len(texts))
	for _, t := range texts {
		if a, err := netip.ParseAddr(t); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// remedyOfRow is a stored refusal's remedy, with its internal-host hint.
func remedyOfRow(r models.Refusal) guard.Remedy {
	rem := guard.RemedyOf(r.RemedyKind, r.RemedyValue)
	if rem.Kind == guard.RemedyAddEntry {
		rem.Internal = r.RemedyInternal
	}
	return rem
}
