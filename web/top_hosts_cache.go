package web

import (
	"context"
	"sync"
	"time"

	"github.com/outboundhq/outbound/models"
)

// topHostsCache keeps the refusal log's "most refused today" list between
// loads of the page.
//
// Ranking today's refused hosts adds up every host's counter for the day:
// 5,000 hosts cost PostgreSQL about 5 ms of CPU, a flood's 20,000 hosts
// about 60 ms, on every load of the page, exactly when a flood brings
// support to it and the database is busiest taking the flood's rows.
// Today's count, read fresh on every load, costs a fraction of a
// millisecond, and it tells when the list may have changed: the list is
// ranked again only when the count moved and the kept one is older than
// topHostsTTL. So a quiet log always shows the exact list, and while
// refusals arrive the list lags the count by at most topHostsTTL. Loads
// that find the list stale at the same time wait for one ranking, not
// one each.
type topHostsCache struct {
	mu      sync.Mutex
	day     time.Time
	n       int
	count   int64
	ranked  time.Time
	hosts   []models.HostCount
	ranking chan struct{} // closed when the ranking in progress ends; nil when none is
}

// topHostsTTL is how long the list may lag today's count while refusals
// arrive.
const topHostsTTL = 5 * time.Second

// get returns today's n most refused hosts, ranking them with rank when
// the kept list is not good for count (today's refusal count) at now.
func (c *topHostsCache) get(ctx context.Context, day time.Time, n int, count int64, now time.Time,
	rank func(context.Context) ([]models.HostCount, error)) ([]models.HostCount, error) {
	for {
		c.mu.Lock()
		if c.hosts != nil && c.day.Equal(day) && c.n == n && (c.count == count || now.Sub(c.ranked) < topHostsTTL) {
			hosts := c.hosts
			c.mu.Unlock()
			return hosts, nil
		}
		if wait := c.ranking; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue // look again: the ranking just made may do
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.ranking = done
		c.mu.Unlock()

		hosts, err := rank(ctx)
		c.mu.Lock()
		c.ranking = nil
		if err == nil {
			if hosts == nil {
				hosts = []models.HostCount{}
			}
			c.day, c.n, c.count, c.ranked, c.hosts = day, n, count, now, hosts
		}
		c.mu.Unlock()
		close(done)
		return hosts, err
	}
}
