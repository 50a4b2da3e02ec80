package web

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errReadUnfinished is what the loads waiting for a read that panicked
// are told.
var errReadUnfinished = errors.New("web: reading the page's summary did not finish")

// countKept keeps a value the refusal log page shows between loads of
// the page, read again from the store only when today's refusal count
// has moved and the kept value is keptTTL old, or when it is maxAge old
// whatever the count.
//
// Why: the page's summaries (today's most refused hosts, the filter
// menus) cost the database milliseconds each to read, on every load,
// exactly when a flood brings support to the page and the database is
// busiest taking the flood's rows. Today's count, read fresh on every
// load for a fraction of a millisecond, says when they may have changed.
// While refusals arrive a summary lags the count by at most keptTTL.
// Loads that find the value stale at the same time wait for one read,
// not one each. The zero value is ready to use.
type countKept[K comparable, V any] struct {
	mu      sync.Mutex
	have    bool
	key     K
	count   int64
	read    time.Time
	value   V
	reading *keptRead // the read in progress; nil when none is
}

// keptRead is one read of the store, which the loads that found the kept
// value stale at the same time wait for.
type keptRead struct {
	done chan struct{} // closed when err is set
	err  error
	// gaveUp says the load that read had given up (its request ended):
	// its error is no answer for the others, who read again.
	gaveUp  bool
	waiters int // loads waiting for it, less those who gave up (for tests)
}

// keptTTL is how long a kept value may lag today's count while refusals
// arrive.
const keptTTL = 5 * time.Second

// get returns the value for key, read with read when the kept one is not
// good for count (today's refusal count) at now. maxAge > 0 bounds how
// old a kept value may be even when the count stands still. A kept value
// that exact (if not nil) says true of is good for the count it was read
// at only, not for keptTTL after. A clock that went back (now before the
// kept value's read) makes it stale: its age is unknown.
func (c *countKept[K, V]) get(ctx context.Context, key K, count int64, now time.Time, maxAge time.Duration, exact func(V) bool,
	read func(context.Context) (V, error)) (V, error) {
	var zero V
	for {
		c.mu.Lock()
		age := now.Sub(c.read)
		lags := age < keptTTL && (exact == nil || !exact(c.value))
		if c.have && c.key == key && age >= 0 && (c.count == count || lags) && (maxAge <= 0 || age < maxAge) {
			v := c.value
			c.mu.Unlock()
			return v, nil
		}
		if r := c.reading; r != nil {
			r.waiters++
			c.mu.Unlock()
			select {
			case <-r.done:
				if r.err != nil && !r.gaveUp && ctx.Err() == nil {
					// The store failed the read this load waited for:
					// the same answer, not a read of its own after it.
					return zero, r.err
				}
				continue // look again: the value just read may do
			case <-ctx.Done():
				c.mu.Lock()
				r.waiters--
				c.mu.Unlock()
				return zero, ctx.Err()
			}
		}
		r := &keptRead{done: make(chan struct{})}
		c.reading = r
		c.mu.Unlock()
		return c.readNow(ctx, r, key, count, now, read)
	}
}

// readNow reads the value for get and keeps it. However read ends, a
// panic included, the waiting loads are let go: a read left in progress
// would hold every later load of the page.
func (c *countKept[K, V]) readNow(ctx context.Context, r *keptRead, key K, count int64, now time.Time,
	read func(context.Context) (V, error)) (V, error) {
	var (
		v        V
		err      error
		finished bool
	)
	defer func() {
		if !finished {
			err = errReadUnfinished
		}
		c.mu.Lock()
		c.reading = nil
		if err == nil {
			c.have, c.key, c.count, c.read, c.value = true, key, count, now, v
		}
		c.mu.Unlock()
		r.err, r.gaveUp = err, ctx.Err() != nil
		close(r.done)
	}()
	v, err = read(ctx)
	finished = true
	return v, err
}
