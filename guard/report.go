package guard

import (
	"context"
	"time"
)

// Event is one refused request, as the refusal log records it.
type Event struct {
	Time    time.Time
	Caller  Caller
	Refusal Refusal
	Port    uint16
	// Redirects are the URLs that redirected to the refused one, oldest
	// first; empty when the first URL was refused.
	Redirects []string
}

// Reporter receives every refusal. It must not block: the console's store
// queues events and writes them in batches, so a slow disk never holds up
// a decision.
type Reporter interface {
	Report(Event)
}

// Observation is one decision the guard enforced: who asked, for what, and
// how it went. Metrics and the one-line-per-decision log hang off it.
type Observation struct {
	Caller  Caller
	Allowed bool
	Code    Code   // of a refusal
	Reason  Reason // of a refusal
	URL     string
	Host    string
	// Elapsed is, for an allowed request, the time until the response
	// headers (redirects included) or until a tunnel was connected.
	Elapsed time.Duration
}

// Observer sees every decision the guard enforces, allowed or refused, on
// every path: the client, the proxy, and refusals tools report. Refusals
// also go to the Reporter. It must not block.
type Observer interface {
	Observe(Observation)
}

// observe hands o to the observer, if any.
func (g *Guard) observe(o Observation) {
	if g.observer != nil {
		g.observer.Observe(o)
	}
}

// ReporterFunc adapts a function to Reporter.
type ReporterFunc func(Event)

// Report calls f(e).
func (f ReporterFunc) Report(e Event) { f(e) }

// Report records a refusal made outside the guard's own paths, such as a
// tool refusing a content type, so that every refusal reaches the same
// log with the caller from ctx.
func (g *Guard) Report(ctx context.Context, r *Refusal, port uint16, redirects []string) {
	if r == nil {
		return
	}
	g.observe(Observation{Caller: CallerFrom(ctx), Code: r.Code, Reason: r.Reason, URL: r.URL, Host: r.Host})
	if g.reporter == nil {
		return
	}
	g.reporter.Report(Event{
		Time:      g.now(),
		Caller:    CallerFrom(ctx),
		Refusal:   *r,
		Port:      port,
		Redirects: append([]string(nil), redirects...),
	})
}
