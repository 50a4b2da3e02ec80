package guard

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Record is one enforced decision: one request through the guard's client
// or proxy, or one call of a tool built on the guard. Whatever happened,
// allowed, refused by the policy, or failed on the network, the request
// has exactly one Record, so the log, the metrics and the refusal log all
// count the same thing once.
type Record struct {
	Time   time.Time
	Caller Caller
	// Refusal is nil for an allowed request. Its Kind tells a refusal of
	// the policy from a failure of the network.
	Refusal *Refusal
	URL     string
	Host    string
	Port    uint16
	// Cached is true when the answer came from a cache and nothing was
	// sent; the policy in force still allowed it.
	Cached bool
	// Proxied is true for a request through the proxy, as opposed to a
	// call made with the client (or a tool call built on it).
	Proxied bool
	// Elapsed is the time until the answer: the response headers
	// (redirects included), the connected tunnel, or the tool's answer.
	Elapsed time.Duration
	// Redirects are the URLs that redirected to URL, oldest first; empty
	// when the first URL was the last.
	Redirects []string
	// Burst marks one of a burst of alike refusals that the guard
	// rate-limits: wrong proxy credentials from one network, or past a
	// global cap. It is a decision like any other (count it, log it), but
	// a sink that keeps rows may skip it; the next record of the kind that
	// is not marked says in its message how many were left out.
	Burst bool
	// WouldRefuse is set on an allowed request that the caller's
	// report-only rules would have refused: the refusal enforcing them
	// would give. The request itself went through.
	WouldRefuse *Refusal
	// Note, when set, is a sentence a sink that keeps rows adds to this
	// record's row: what the Burst records it stands for were, such as
	// how many requests of one call were refused, on which hosts.
	Note string
}

// Allowed reports whether the request was allowed.
func (r *Record) Allowed() bool { return r.Refusal == nil }

// Recorder receives every Record. It must not block: the console's store
// queues refusals and writes them in batches, so a slow disk never holds
// up a decision.
type Recorder interface {
	Record(Record)
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(Record)

// Record calls f(r).
func (f RecorderFunc) Record(r Record) { f(r) }

// Notes collects what the guard decided for the requests made under one
// context, for a caller that records its own call: a tool that makes a
// request, reads its body and then decides on the content records the
// call once, when it ends, instead of the guard recording each step.
type Notes struct {
	mu   sync.Mutex
	last Record
	seen bool
}

type notesKey struct{}

// WithNotes returns a context under which the guard records nothing by
// itself: each Record it would have made is kept in the returned Notes
// (the last one wins), and the caller records its call with Guard.Record.
// Requests made under any other context are recorded as usual, one Record
// each.
func WithNotes(ctx context.Context) (context.Context, *Notes) {
	n := &Notes{}
	return context.WithValue(ctx, notesKey{}, n), n
}

// Last returns the last Record noted, if any.
func (n *Notes) Last() (Record, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.last, n.seen
}

func (n *Notes) note(r *Record) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.last, n.seen = *r, true
}

// record records rec under the caller in ctx, or notes it when the caller
// records its own calls. A refusal is stamped first, so the value the
// guard hands back is complete when returned: a tool that writes its
// answer before its call is recorded shows the same caller, port and
// redirect chain as the record.
func (g *Guard) record(ctx context.Context, rec Record) { g.recordAt(ctx, &rec) }

// recordAt is record for a Record the caller owns and lets it stamp in
// place. Every proxied request ends here, so the Record is handed down by
// pointer until the Recorder takes its copy: passed by value, each of
// these calls held one more copy on the request's stack (see
// Proxy.forward on why that depth costs).
func (g *Guard) recordAt(ctx context.Context, rec *Record) {
	rec.Caller = CallerFrom(ctx)
	rec.Redirects = slices.Clone(rec.Redirects)
	if rec.Refusal != nil {
		rec.Refusal.stamp(rec.Caller, rec.Port, rec.Redirects)
	}
	if rec.WouldRefuse != nil {
		rec.WouldRefuse = stampedCopy(rec.WouldRefuse, rec)
	}
	if n, ok := ctx.Value(notesKey{}).(*Notes); ok {
		n.note(rec)
		return
	}
	g.recordOut(rec)
}

// Record hands rec to the Recorder, stamping its Time when unset, and
// fills a refusal's tool, agent, port and redirects from the record, so
// the value the caller answers with is the one the log keeps (a refusal
// the guard made is already stamped; one the caller made is stamped
// here). It is how a caller that took Notes records its call, once, when
// it ends.
func (g *Guard) Record(rec Record) { g.recordOut(&rec) }

func (g *Guard) recordOut(rec *Record) {
	if rec.Time.IsZero() {
		rec.Time = g.now()
	}
	if rec.Refusal != nil {
		rec.Refusal.stamp(rec.Caller, rec.Port, rec.Redirects)
		rec.WouldRefuse = nil // a refused request is refused, not tried
	}
	if rec.WouldRefuse != nil {
		rec.WouldRefuse = stampedCopy(rec.WouldRefuse, rec)
	}
	if g.recorder != nil {
		g.recorder.Record(*rec)
	}
}

// stampedCopy is a report-only refusal stamped with the record's caller,
// as a copy: the decision that holds it may be shared.
//
// Out of line: its copy of the Refusal takes stack only when there is one.
//
//go:noinline
func stampedCopy(r *Refusal, rec *Record) *Refusal {
	if r == nil {
		return nil
	}
	c := *r
	c.stamp(rec.Caller, rec.Port, rec.Redirects)
	return &c
}

// refused records a refusal on the guard's own request paths and returns it.
func (g *Guard) refused(ctx context.Context, r *Refusal, port uint16, redirects []string) *Refusal {
	g.record(ctx, Record{Refusal: r, URL: r.URL, Host: r.Host, Port: port, Redirects: redirects})
	return r
}
