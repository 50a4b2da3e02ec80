package models

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A hostile page or agent can make thousands of identical refusals a
// second (the same host, through the proxy or the API, over and over).
// Each is still a decision (counted in the metrics, one line in the JSON
// decision log), but as rows they would only fill the queue, the spill
// file and the log page with copies. The aggregator sits in front of the
// refusal log's writer and merges them:
//
//   - the first refusal of its kind in a window goes straight to the
//     writer, as a row of its own (so a single refusal is never delayed);
//   - the alike refusals after it, until the window ends, only count: at
//     the end of the window (the burst_window setting, AggregateWindow
//     by default) they become one row
//     with Count, the time of the first of them and LastTime the last;
//   - then the kind is forgotten: a flood lasting a minute is at most four
//     rows a second, whose counts sum to every request.
//
// The window is short because what it holds is only in memory: kill -9
// loses the counts of the window in progress (the spill file never saw
// them), on top of the writer's own window.
//
// A window of 0 turns merging off: every refusal is a row of its own.
//
// Alike means the same agent, tool, integration, ticket, thread, code, reason, kind,
// host, port and proxied: what a review and a remedy depend on. The URL is
// not part of it: a flood of cache-busting paths on one host is one
// refusal as far as the allowlist is concerned, and the row keeps the
// first URL (and addresses and redirects) of the window. Different hosts,
// ports, agents, tickets or codes are never merged.
//
// Memory is bounded: at most AggregateMaxKinds kinds are tracked in a
// window; a refusal of a new kind past that goes straight to the writer,
// unmerged. Close writes what is pending before it closes the writer, so
// its account of what was not written stays exact.

// AggregateWindow is how long alike refusals are merged into one row
// before it is queued, unless the burst_window setting says otherwise:
// the longest the log page can be behind a flood.
const AggregateWindow = 500 * time.Millisecond

// aggregateOffPoll is how often a switched-off aggregator looks whether
// merging was switched back on (and writes what an earlier window held).
const aggregateOffPoll = 250 * time.Millisecond

// AggregateMaxKinds bounds the kinds of refusal tracked in one window.
const AggregateMaxKinds = 4096

// aggregateKey is what makes two refusals alike.
type aggregateKey struct {
	agent, tool, integration, ticket, thread, code, reason, kind, host string
	port                                                               int
	proxied                                                            bool
}

func aggregateKeyOf(r *Refusal) aggregateKey {
	return aggregateKey{r.Agent, r.Tool, r.Integration, r.Ticket, r.Thread, r.Code, r.Reason, r.Kind, r.Host, r.Port, r.Proxied}
}

// pendingBurst is one kind's window: the refusals after its first.
type pendingBurst struct {
	row   Refusal // the first of the repeats
	count int64
	last  time.Time
}

// RefusalAggregator merges bursts of alike refusals (see above) in front
// of a RefusalWriter. Its Write, Close and Stats stand in for the
// writer's.
type RefusalAggregator struct {
	w      *RefusalWriter
	window func() time.Duration // read at every window, so a setting change applies at the next

	mu     sync.Mutex
	seen   map[aggregateKey]*pendingBurst // kinds met this window; nil burst: only the first so far
	closed bool

	merged atomic.Uint64 // refusals that became part of an aggregated row

	stop chan struct{}
	done chan struct{}
}

// NewRefusalAggregator starts merging bursts in front of w, flushing every
// window (AggregateWindow when zero).
func NewRefusalAggregator(w *RefusalWriter, window time.Duration) *RefusalAggregator {
	if window <= 0 {
		window = AggregateWindow
	}
	return NewRefusalAggregatorFrom(w, func() time.Duration { return window })
}

// NewRefusalAggregatorFrom is NewRefusalAggregator with a window read from
// window at the start of every window (a hot-reloaded setting); a window
// of 0 or less writes every refusal as a row of its own.
func NewRefusalAggregatorFrom(w *RefusalWriter, window func() time.Duration) *RefusalAggregator {
	a := &RefusalAggregator{w: w, window: window, seen: make(map[aggregateKey]*pendingBurst),
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.run()
	return a
}

// Write queues r, or counts it into its kind's pending row; it never
// waits for the database. It returns false only if the writer refused
// the row (closed, or neither memory nor the spill file could take it).
func (a *RefusalAggregator) Write(r Refusal) bool {
	if r.Count > 1 || a.window() <= 0 { // already stands for several, or merging is off
		return a.w.Write(r)
	}
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	r.capStrings() // what is kept here is bounded as the queue is
	k := aggregateKeyOf(&r)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return a.w.Write(r) // counted as a drop by the closed writer
	}
	b, ok := a.seen[k]
	switch {
	case !ok:
		if len(a.seen) < AggregateMaxKinds {
			a.seen[k] = nil // the first: a row of its own, at once
		}
		a.mu.Unlock()
		return a.w.Write(r)
	case b == nil:
		a.seen[k] = &pendingBurst{row: r, count: 1, last: r.Time}
	default:
		b.count++
		b.last = r.Time
	}
	a.mu.Unlock()
	a.merged.Add(1)
	return true
}

func (a *RefusalAggregator) run() {
	defer close(a.done)
	for {
		d := a.window()
		if d <= 0 {
			d = aggregateOffPoll
		}
		t := time.NewTimer(d)
		select {
		case <-a.stop:
			t.Stop()
			return
		case <-t.C:
			a.flush()
		}
	}
}

// flush ends the window: every pending burst becomes one row, and every
// kind is forgotten.
func (a *RefusalAggregator) flush() {
	a.mu.Lock()
	var rows []Refusal
	for _, b := range a.seen {
		if b != nil {
			b.row.Count = b.count
			if b.count > 1 { // one repeat alone is a plain row, only later
				b.row.LastTime = &b.last
			}
			rows = append(rows, b.row)
		}
	}
	clear(a.seen)
	a.mu.Unlock()
	for _, r := range rows {
		a.w.Write(r) // a refused row is counted as dropped by the writer
	}
}

// Close writes the pending bursts to the writer, then closes it: its
// account of rows not written (WriterCloseError) counts rows, and an
// aggregated row's Count says how many refusals it held.
func (a *RefusalAggregator) Close(ctx context.Context) error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	close(a.stop)
	<-a.done
	a.flush()
	return a.w.Close(ctx)
}

// Stats is the writer's, with the refusals still being merged counted as
// queued rows (they are not in the database yet) and Merged set.
func (a *RefusalAggregator) Stats() RefusalWriterStats {
	st := a.w.Stats()
	a.mu.Lock()
	for _, b := range a.seen {
		if b != nil {
			st.Queued++
		}
	}
	a.mu.Unlock()
	st.Merged = a.merged.Load()
	return st
}
