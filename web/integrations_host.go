package web

import (
	"context"
	"net/url"
	"strings"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/views"
)

// An integration whose host the policy refuses is saved (the admin may be
// about to allow it) but cannot be called: every call is refused. So the
// save says so instead of "agents can call it now", and the list flags
// such integrations with the allowlist's add form prefilled. Only the
// policy's refusals count: a host that does not resolve from here may be
// a network problem of the moment, and no entry fixes it.

// integrationHostRefusal is the policy's refusal of an integration's host
// (its URL template's scheme, host and port), or nil when it is allowed
// or failed only on the network.
func (s *Server) integrationHostRefusal(ctx context.Context, name, urlTemplate string) *guard.Refusal {
	if s.d.Guard == nil {
		return nil
	}
	u, err := url.Parse(urlTemplate)
	// Placeholders may fill only the path and the query, so the scheme
	// and authority parse as they are.
	if err != nil || u.Host == "" || strings.ContainsAny(u.Host, "{}") {
		return nil
	}
	// Decided as the integration's own calls are, so an entry scoped to
	// this integration counts.
	d := s.decide(guard.WithCaller(ctx, app.CallerAs("", name)), u.Scheme+"://"+u.Host+"/")
	if d.Allowed || d.Kind == guard.KindNetwork {
		return nil
	}
	return d.Refusal()
}

// allowEntryHref is the allowlist page with its add form prefilled with
// entry and a note naming the integration; "" when no entry would help.
func allowEntryHref(r *guard.Refusal, integration string) string {
	if r.Remedy.Kind != guard.RemedyAddEntry {
		return ""
	}
	v := url.Values{"entry": {r.Remedy.Entry}, "note": {"for the HTTP integration " + integration}}
	return "/integrations?" + v.Encode() + "#allow-form"
}

// hostWarning is the list's flag for an integration whose host is refused.
func hostWarning(r *guard.Refusal, integration string, admin bool) views.HostWarning {
	w := views.HostWarning{Message: "Agents' calls are refused: " + r.Message, Fix: r.Fix}
	if admin {
		w.FixHref = allowEntryHref(r, integration)
		w.Entry = r.Remedy.Entry
	}
	return w
}

// savedButRefused is the save's notice for an integration whose host is
// refused: saved, but not callable until the fix.
func savedButRefused(name, verb string, r *guard.Refusal) string {
	msg := "Integration " + name + " " + verb + ", but agents cannot call it yet: " + r.Message + " " + r.Fix
	if r.Remedy.Kind == guard.RemedyAddEntry {
		msg += " The HTTP integrations list links to the allowlist with the entry filled in."
	}
	return msg
}
