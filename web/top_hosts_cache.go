package web

import (
	"context"
	"time"

	"github.com/outboundhq/outbound/models"
)

// topHostsCache keeps the refusal log's "most refused today" list between
// loads of the page (countKept says when it is read again). Ranking
// today's refused hosts adds up every host's counter for the day: 5,000
// hosts cost PostgreSQL about 5 ms of CPU, a flood's 20,000 hosts about
// 60 ms, on every load of the page. A quiet log always shows the exact
// list.
type topHostsCache struct {
	kept countKept[topHostsKey, []models.HostCount]
}

type topHostsKey struct {
	day int64 // Unix seconds of the day's midnight
	n   int
}

// topHostsTTL is how long the list may lag today's count while refusals
// arrive.
const topHostsTTL = keptTTL

// get returns today's n most refused hosts, ranking them with rank when
// the kept list is not good for count (today's refusal count) at now. An
// empty list is good for its own count only: next to refusals today the
// log page takes it to say none of them named a host, which a list
// ranked before hosts were refused must not say for keptTTL. Ranking
// again is cheap while it finds none (today has no host counter to add
// up); once it finds hosts, their list is kept as any other.
func (c *topHostsCache) get(ctx context.Context, day time.Time, n int, count int64, now time.Time,
	rank func(context.Context) ([]models.HostCount, error)) ([]models.HostCount, error) {
	return c.kept.get(ctx, topHostsKey{day.Unix(), n}, count, now, 0, noHosts, func(ctx context.Context) ([]models.HostCount, error) {
		hosts, err := rank(ctx)
		if err == nil && hosts == nil {
			hosts = []models.HostCount{}
		}
		return hosts, err
	})
}

// noHosts says a kept list of top hosts is empty (topHostsCache.get).
func noHosts(hosts []models.HostCount) bool { return len(hosts) == 0 }

// facetsCache keeps the refusal log's filter menus (the distinct tools,
// agents, codes, reasons and integrations) between loads of the page.
// Reading them walks five indexes from their newest end, where the rows
// the log writer has not committed yet lie, and each of those is checked
// and skipped: about 7 ms of PostgreSQL's time on every load while 10,000
// refusals a second arrive. The menus change when a refusal brings a new
// value (which moves today's count) or a purge removes the last row of
// one (which does not): so they are read again at least every
// facetsMaxAge.
type facetsCache struct {
	kept countKept[struct{}, models.RefusalFacets]
}

// facetsMaxAge bounds how long a menu may show a value purged from the
// log, or miss one a refusal dated before today brought.
const facetsMaxAge = 30 * time.Second

func (c *facetsCache) get(ctx context.Context, count int64, now time.Time,
	read func(context.Context) (models.RefusalFacets, error)) (models.RefusalFacets, error) {
	return c.kept.get(ctx, struct{}{}, count, now, facetsMaxAge, nil, read)
}
