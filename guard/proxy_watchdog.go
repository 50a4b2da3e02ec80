package guard

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The proxy's watchdogs. Each absolute-URI request is bounded by the
// Timeout setting: its decision (DNS), dial and wait for the response
// headers together, and then every silence of its body. With a timer per
// request (time.AfterFunc, re-armed by every piece of the body) that was
// a timer and its closure allocated, added to and taken off the runtime's
// timer heap, and the heap changed again for every piece: work a bare
// forward proxy does not do, on every request, for a timeout that almost
// never fires. Instead one goroutine per proxy sweeps the requests in
// flight every watchdogTick, while there are any: a piece of body only
// counts up (no clock, no lock), and the sweep moves the request's
// deadline when it sees that it did.
//
// A request is cut off no sooner than Timeout after its start or its last
// piece of body, and at most two ticks later than that.

// watchdogTick is how often the requests in flight are swept, and so how
// late, at most twice over, a timeout is enforced (Timeout is at least a
// second, MinTimeout).
const watchdogTick = 25 * time.Millisecond

// watchdog bounds one request. The sweeper owns deadline and seen; the
// request kicks progress.
type watchdog struct {
	cancel   context.CancelCauseFunc
	timeout  time.Duration
	progress atomic.Uint32 // pieces of body passed on so far

	deadline   time.Duration // since watchdogEpoch
	seen       uint32        // progress at the last sweep
	prev, next *watchdog     // in watchdogs.live
}

// kick says that a piece of the body moved: the silence starts again.
func (w *watchdog) kick() { w.progress.Add(1) }

// watchdogEpoch is the origin of deadlines, read on the monotonic clock.
var watchdogEpoch = time.Now()

// watchdogs is a proxy's requests in flight and their sweeper. The zero
// value is ready to use.
type watchdogs struct {
	mu       sync.Mutex
	live     watchdog // the list's sentinel
	sweeping bool
}

// start watches w from now: cancel(errProxyTimeout) runs once w's
// request has been silent for timeout, unless stop comes first.
func (s *watchdogs) start(w *watchdog, cancel context.CancelCauseFunc, timeout time.Duration) {
	w.cancel, w.timeout = cancel, timeout
	w.deadline = time.Since(watchdogEpoch) + timeout
	s.mu.Lock()
	if s.live.next == nil {
		s.live.next, s.live.prev = &s.live, &s.live
	}
	w.prev, w.next = s.live.prev, &s.live
	s.live.prev.next = w
	s.live.prev = w
	if !s.sweeping {
		s.sweeping = true
		go s.sweep()
	}
	s.mu.Unlock()
}

// stop stops watching w; its cancel is not called after stop returns
// unless it was already running.
func (s *watchdogs) stop(w *watchdog) {
	s.mu.Lock()
	s.unlink(w)
	s.mu.Unlock()
}

func (s *watchdogs) unlink(w *watchdog) {
	if w.next == nil {
		return // a sweep took it out when it timed out
	}
	w.prev.next, w.next.prev = w.next, w.prev
	w.prev, w.next = nil, nil
}

// sweep runs every watchdogTick until no request is in flight, and
// cancels the requests silent past their deadline.
func (s *watchdogs) sweep() {
	t := time.NewTicker(watchdogTick)
	defer t.Stop()
	var expired []context.CancelCauseFunc
	for range t.C {
		s.mu.Lock()
		now := time.Since(watchdogEpoch)
		for w := s.live.next; w != &s.live; {
			next := w.next
			if p := w.progress.Load(); p != w.seen {
				// Dated by a reading taken after the piece was seen: a
				// sweep held up before it (a busy lock, a descheduled
				// goroutine) must not date it early and cut the request
				// before Timeout of silence.
				w.seen, w.deadline = p, time.Since(watchdogEpoch)+w.timeout
			} else if now >= w.deadline {
				s.unlink(w)
				expired = append(expired, w.cancel)
			}
			w = next
		}
		done := s.live.next == &s.live
		if done {
			s.sweeping = false
		}
		s.mu.Unlock()
		for i, cancel := range expired {
			cancel(errProxyTimeout)
			expired[i] = nil
		}
		expired = expired[:0]
		if done {
			return
		}
	}
}
