package app

import (
	"net/netip"
	"strings"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// refusalRow is the refusal log's row for a refused or failed Record: the
// one place a Record becomes a models.Refusal.
func refusalRow(rec guard.Record) models.Refusal {
	r := rec.Refusal
	return models.Refusal{
		Time: rec.Time, Tool: rec.Caller.Tool, URL: r.URL, Host: r.Host, Port: int(rec.Port),
		Addresses: joinAddrs(r.Addresses), Code: string(r.Code), Reason: string(r.Reason),
		Message: r.Message, Fix: r.Fix, Entry: r.Entry,
		Agent: rec.Caller.Agent, Thread: rec.Caller.Thread, Trigger: rec.Caller.Trigger,
		Redirects: strings.Join(rec.Redirects, "\n"),
	}
}

func joinAddrs(addrs []netip.Addr) string {
	parts := make([]string, len(addrs))
	for i, a := range addrs {
		parts[i] = a.String()
	}
	return strings.Join(parts, ",")
}
