package app

import (
	"context"
	"log/slog"
	"net/netip"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// report turns a guard event into a refusal log row. The writer queues it
// and never blocks the decision.
func (a *App) report(e guard.Event) {
	r := e.Refusal
	a.refusals.Write(models.Refusal{
		Time: e.Time, Tool: e.Caller.Tool, URL: r.URL, Host: r.Host, Port: int(e.Port),
		Addresses: addrTexts(r.Addresses), Code: string(r.Code), Reason: string(r.Reason), Kind: string(r.KindOf()),
		Message: r.Message, Fix: r.Fix, RemedyKind: string(r.Remedy.Kind), RemedyValue: r.Remedy.Value(), Entry: r.Entry,
		Agent: e.Caller.Agent, Thread: e.Caller.Thread, Trigger: e.Caller.Trigger,
		Redirects: e.Redirects,
	})
	a.log.Info("refused", "tool", e.Caller.Tool, "agent", e.Caller.Agent, "thread", e.Caller.Thread,
		"url", r.URL, "host", r.Host, "code", r.Code, "reason", r.Reason, "kind", r.KindOf(),
		"remedy", r.Remedy.Kind, "addresses", addrTexts(r.Addresses), "redirects", e.Redirects)
}

// decisionLog writes one structured record per allowed decision and passes
// every observation on (to the metrics). Refusals get their record from
// report, with the refusal's details, so each decision has exactly one.
type decisionLog struct {
	log  *slog.Logger
	next guard.Observer
}

func (l decisionLog) Observe(o guard.Observation) {
	if o.Allowed && l.log.Enabled(context.Background(), slog.LevelInfo) {
		// Typed attributes: this runs once per proxied request.
		l.log.LogAttrs(context.Background(), slog.LevelInfo, "allowed",
			slog.String("tool", o.Caller.Tool), slog.String("agent", o.Caller.Agent), slog.String("thread", o.Caller.Thread),
			slog.String("url", o.URL), slog.String("host", o.Host), slog.Int64("ms", o.Elapsed.Milliseconds()))
	}
	if l.next != nil {
		l.next.Observe(o)
	}
}

// addrTexts is addrs as the store keeps them: a list, never joined text.
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
