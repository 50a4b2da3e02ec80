package guard

import (
	"net/netip"
	"sync"
	"time"
)

// authLog limits how often wrong proxy credentials reach the refusal log:
// a client retrying a stale token, or someone guessing, would otherwise
// write a row per attempt. Every attempt is still answered 407.
//
// Addresses are counted by network, because one client can pick any
// source in 127.0.0.0/8 or an IPv6 /64; and all networks together are
// capped too, so the log cannot be flooded from many networks. The next
// row logged says how many were left out.
type authLog struct {
	mu         sync.Mutex
	window     time.Duration
	clients    map[netip.Prefix]time.Time
	windowFrom time.Time
	logged     int
	suppressed int
}

const (
	authLogWindow     = time.Minute
	authLogPerWindow  = 10 // rows for all networks together
	authLogMaxClients = 10000
)

// admit reports whether an attempt from remote should be logged now, and
// how many attempts were left out since the last row.
func (l *authLog) admit(remote string, now time.Time) (bool, int) {
	key := authLogKey(remote)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.clients == nil || len(l.clients) >= authLogMaxClients {
		l.clients = map[netip.Prefix]time.Time{}
	}
	if now.Sub(l.windowFrom) >= l.window {
		l.windowFrom, l.logged = now, 0
	}
	if last, ok := l.clients[key]; (ok && now.Sub(last) < l.window) || l.logged >= authLogPerWindow {
		l.suppressed++
		return false, 0
	}
	l.clients[key] = now
	l.logged++
	n := l.suppressed
	l.suppressed = 0
	return true, n
}

// authLogKey is the network an address is counted in: 127.0.0.0/8 for
// loopback, /24 for other IPv4, /64 for IPv6.
func authLogKey(remote string) netip.Prefix {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Prefix{}
	}
	a := ap.Addr().Unmap()
	bits := 64
	switch {
	case a.Is4() && a.IsLoopback():
		bits = 8
	case a.Is4():
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p
}
