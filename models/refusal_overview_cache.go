package models

import (
	"strings"
	"sync"
	"time"
)

// OverviewCache keeps the counts of closed buckets (hours and days that
// ended before the query) for a few minutes, so that reloading the
// Overview counts only the current hour and day again instead of thirty
// days of refusals. A closed bucket changes only when the retention purge
// deletes its rows or a refusal is written late, and the short lifetime
// bounds how long either shows; the current bucket is never cached. The
// zero value is not usable: use NewOverviewCache.
type OverviewCache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[overviewKey]cachedBucket
}

type overviewKey struct {
	start, end int64
	attack     string
}

type cachedBucket struct {
	b      OverviewBucket
	stored time.Time
}

// overviewCacheMax bounds the entries: a page needs 54, so this holds the
// page's buckets across several hours of reloads.
const overviewCacheMax = 2000

// closedAfter is how long after a bucket's end its count is final enough
// to cache: the refusal writer's batches land within seconds.
const closedAfter = time.Minute

// NewOverviewCache returns a cache whose entries live ttl.
func NewOverviewCache(ttl time.Duration) *OverviewCache {
	return &OverviewCache{ttl: ttl, now: time.Now, m: map[overviewKey]cachedBucket{}}
}

func keyOf(start, end time.Time, attack []string) overviewKey {
	return overviewKey{start: start.UnixNano(), end: end.UnixNano(), attack: strings.Join(attack, "\x00")}
}

func (c *OverviewCache) get(start, end time.Time, attack []string) (OverviewBucket, bool) {
	if c == nil {
		return OverviewBucket{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[keyOf(start, end, attack)]
	if !ok || c.now().Sub(e.stored) > c.ttl {
		return OverviewBucket{}, false
	}
	return e.b, true
}

// put keeps b if it closed at least closedAfter before now.
func (c *OverviewCache) put(b OverviewBucket, attack []string, now time.Time) {
	if c == nil || now.Sub(b.End) < closedAfter {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now()
	if len(c.m) >= overviewCacheMax {
		for k, e := range c.m {
			if t.Sub(e.stored) > c.ttl {
				delete(c.m, k)
			}
		}
		if len(c.m) >= overviewCacheMax {
			clear(c.m)
		}
	}
	c.m[keyOf(b.Start, b.End, attack)] = cachedBucket{b: b, stored: t}
}
