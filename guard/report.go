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

// Observer sees every decision the guard enforces, allowed or refused,
// and how long fetches take; metrics hang off it. Refusals also go to the
// Reporter. It must not block.
type Observer interface {
	ObserveDecision(c Caller, allowed bool, code Code)
	ObserveFetch(c Caller, d time.Duration)
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
	if g.observer != nil {
		g.observer.ObserveDecision(CallerFrom(ctx), false, r.Code)
	}
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
