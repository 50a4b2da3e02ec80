package web

import (
	"sync"
	"time"
)

// loginThrottle limits failed sign-ins per client address: after max
// failures within window, that address waits until the oldest failure
// leaves the window. Its map is bounded; when full it forgets the oldest
// address, so a flood of addresses cannot grow it.
type loginThrottle struct {
	mu       sync.Mutex
	max      int
	window   time.Duration
	now      func() time.Time
	failures map[string][]time.Time
}

const throttleMaxClients = 10000

func newLoginThrottle(max int, window time.Duration, now func() time.Time) *loginThrottle {
	return &loginThrottle{max: max, window: window, now: now, failures: map[string][]time.Time{}}
}

// wait returns how long client must wait before trying again; zero means
// it may try now.
func (t *loginThrottle) wait(client string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	recent := t.prune(client)
	if len(recent) < t.max {
		return 0
	}
	return recent[0].Add(t.window).Sub(t.now())
}

func (t *loginThrottle) fail(client string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.failures[client]; !ok && len(t.failures) >= throttleMaxClients {
		t.evictOldest()
	}
	t.failures[client] = append(t.prune(client), t.now())
}

func (t *loginThrottle) succeed(client string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, client)
}

func (t *loginThrottle) prune(client string) []time.Time {
	cutoff := t.now().Add(-t.window)
	fs := t.failures[client]
	i := 0
	for i < len(fs) && !fs[i].After(cutoff) {
		i++
	}
	fs = fs[i:]
	if len(fs) == 0 {
		delete(t.failures, client)
		return nil
	}
	t.failures[client] = fs
	return fs
}

func (t *loginThrottle) evictOldest() {
	var oldest string
	var at time.Time
	for c, fs := range t.failures {
		if last := fs[len(fs)-1]; oldest == "" || last.Before(at) {
			oldest, at = c, last
		}
	}
	delete(t.failures, oldest)
}
