package main

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// loadGen is the load tests' generator: keep-alive clients, each taking
// the next request number and sending it when it is due, for a set time.
// TestIngestLoad drives console serve and console proxy with it, and
// TestAPIFloor drives console serve and the minimal API beside each other.
type loadGen struct {
	start, deadline time.Time
	answered        atomic.Int64
	failed          atomic.Value // the first error, as a string
	next            atomic.Int64
	wg              sync.WaitGroup
	// Each client's latencies, merged after the load: from the moment a
	// request was due (at a paced rate; otherwise from its sending) to its
	// answer, and from its sending to its answer. The first counts the
	// time a request waited for a free client, which a closed loop of
	// clients otherwise hides (coordinated omission).
	lates, services [][]time.Duration
}

// startLoad starts clients clients, each with a sender of its own from
// newSender, sending for d. At rate > 0 request i is due at start +
// (i-1)/rate; one that is late goes at once, so a server that falls
// behind shows as a rate below the target, not hidden. At rate 0 every
// client sends as fast as it is answered. Request i asks for a distinct
// URL on one of hosts private addresses: refused by the policy before any
// lookup or dial, so nothing leaves the machine.
func startLoad(clients, rate, hosts int, d time.Duration, newSender func() func(target string) error) *loadGen {
	g := &loadGen{lates: make([][]time.Duration, clients), services: make([][]time.Duration, clients)}
	// Room for a client's share of the load (unpaced: at up to 30,000 a
	// second, more than this machine answers), so growing the slices adds
	// neither to the generator's CPU nor to its latencies.
	perSecond := int64(rate)
	if rate == 0 {
		perSecond = 30000
	}
	room := int(perSecond*int64(d/time.Millisecond)/1000/int64(clients)) + 1024
	g.start = time.Now()
	g.deadline = g.start.Add(d)
	for c := range clients {
		g.lates[c], g.services[c] = make([]time.Duration, 0, room), make([]time.Duration, 0, room)
		g.wg.Go(func() {
			send := newSender()
			for time.Now().Before(g.deadline) {
				i := g.next.Add(1)
				due := time.Now()
				if rate > 0 {
					due = g.start.Add(time.Duration(i-1) * time.Second / time.Duration(rate))
					if wait := time.Until(due); wait > 0 {
						time.Sleep(wait)
					}
				}
				h := i % int64(hosts)
				host := fmt.Sprintf("10.%d.%d.%d", h>>16&255, h>>8&255, h&255)
				sent := time.Now()
				if err := send(fmt.Sprintf("http://%s/page/%d", host, i)); err != nil {
					g.failed.CompareAndSwap(nil, err.Error())
					return
				}
				g.answered.Add(1)
				done := time.Now()
				g.lates[c] = append(g.lates[c], done.Sub(due))
				g.services[c] = append(g.services[c], done.Sub(sent))
			}
		})
	}
	return g
}

// wait waits for every client to stop and returns how long the load took.
func (g *loadGen) wait() time.Duration {
	g.wg.Wait()
	return time.Since(g.start)
}

// latencies describes the load's latencies; call it after wait.
func (g *loadGen) latencies() string {
	return fmt.Sprintf("latency from due to answer %s; from sending to answer %s",
		percentiles(slices.Concat(g.lates...)), percentiles(slices.Concat(g.services...)))
}

// percentiles summarises durations: the median, the 99th and 99.9th
// percentiles, and the longest.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	slices.Sort(ds)
	at := func(per1000 int) time.Duration { return nearestRank(ds, per1000).Round(10 * time.Microsecond) }
	return fmt.Sprintf("p50 %v, p99 %v, p99.9 %v, max %v", at(500), at(990), at(999), at(1000))
}

// nearestRank is the per1000/1000 quantile of sorted (not empty): its
// element at rank ceil(n × per1000 / 1000).
func nearestRank(sorted []time.Duration, per1000 int) time.Duration {
	return sorted[(len(sorted)*per1000+999)/1000-1]
}
