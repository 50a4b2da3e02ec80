package guard

import (
	"net"
	"sync"
	"time"
)

// authLog limits how often wrong proxy credentials from one client address
// reach the refusal log: a client retrying a stale token, or someone
// guessing, would otherwise write a row per attempt. Every attempt is
// still answered 407; the first per address and window is logged, and the
// next logged one says how many were left out.
type authLog struct {
	mu      sync.Mutex
	window  time.Duration
	clients map[string]*authLogClient
}

type authLogClient struct {
	logged     time.Time
	suppressed int
}

const (
	authLogWindow     = time.Minute
	authLogMaxClients = 10000
)

// admit reports whether an attempt from remote should be logged now, and
// how many earlier attempts from it were not.
func (l *authLog) admit(remote string, now time.Time) (bool, int) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients == nil {
		l.clients = map[string]*authLogClient{}
	}
	c, ok := l.clients[host]
	if !ok {
		if len(l.clients) >= authLogMaxClients {
			for h, old := range l.clients { // forget clients quiet for a window
				if now.Sub(old.logged) > l.window {
					delete(l.clients, h)
				}
			}
			if len(l.clients) >= authLogMaxClients {
				clear(l.clients)
			}
		}
		c = &authLogClient{}
		l.clients[host] = c
	}
	if !c.logged.IsZero() && now.Sub(c.logged) < l.window {
		c.suppressed++
		return false, 0
	}
	n := c.suppressed
	c.logged, c.suppressed = now, 0
	return true, n
}
