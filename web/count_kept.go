package web

import (
	"context"
	"sync"
	"time"
)

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
	reading chan struct{} // closed when the read in progress ends; nil when none is
}

// keptTTL is how long a kept value may lag today's count while refusals
// arrive.
const keptTTL = 5 * time.Second

// get returns the value for key, read with read when the kept one is not
// good for count (today's refusal count) at now. maxAge > 0 bounds how
// old a kept value may be even when the count stands still.
func (c *countKept[K, V]) get(ctx context.Context, key K, count int64, now time.Time, maxAge time.Duration,
	read func(context.Context) (V, error)) (V, error) {
	for {
		c.mu.Lock()
		age := now.Sub(c.read)
		if c.have && c.key == key && (c.count == count || age < keptTTL) && (maxAge <= 0 || age < maxAge) {
			v := c.value
			c.mu.Unlock()
			return v, nil
		}
		if wait := c.reading; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue // look again: the value just read may do
			case <-ctx.Done():
				var zero V
				return zero, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.reading = done
		c.mu.Unlock()

		v, err := read(ctx)
		c.mu.Lock()
		c.reading = nil
		if err == nil {
			c.have, c.key, c.count, c.read, c.value = true, key, count, now, v
		}
		c.mu.Unlock()
		close(done)
		return v, err
	}
}
