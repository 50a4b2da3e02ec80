package app

import (
	"net/netip"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// refusalRow is the refusal log's row for a refused or failed Record: the
// one place a Record becomes a models.Refusal. Lists stay lists (the store
// owns their encoding), and the remedy and kind are stored as data, so no
// reader ever parses the fix's prose.
func refusalRow(rec guard.Record) models.Refusal {
	r := rec.Refusal
	message := r.Message
	if rec.Note != "" {
		message += " " + rec.Note // what the Burst records this row stands for were
	}
	return models.Refusal{
		Time: rec.Time, Tool: rec.Caller.Tool, Integration: integrationOf(rec), URL: r.URL, Host: r.Host, Port: int(rec.Port),
		Addresses: addrTexts(r.Addresses), Code: string(r.Code), Reason: string(r.Reason), Kind: string(r.KindOf()),
		Message: message, Fix: r.Fix, RemedyKind: string(r.Remedy.Kind), RemedyValue: r.Remedy.Value(), RemedyInternal: r.Remedy.Internal, Entry: r.Entry,
		Agent: rec.Caller.Agent, Thread: rec.Caller.Thread, Trigger: rec.Caller.Trigger, Ticket: rec.Caller.Ticket,
		Redirects: rec.Redirects, Proxied: rec.Proxied,
	}
}

// integrationOf is the integration a record's call was made for: the
// caller's service, or the one its refusal names.
func integrationOf(rec guard.Record) string {
	if rec.Caller.Service != "" {
		return rec.Caller.Service
	}
	if rec.Refusal != nil {
		return rec.Refusal.Service
	}
	return ""
}

// addrTexts is addrs as the store and the log keep them: a list, never
// joined text.
func addrTexts(addrs []netip.Addr) []string {
	if len(addrs) == 0 {
		return nil
	}
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}
