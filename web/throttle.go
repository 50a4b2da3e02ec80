package web

import (
	"container/list"
	"context"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// The sign-in throttle counts failed sign-ins twice: per account (the
// name as typed, normalised) and per source (an IPv4 address, or the /64
// an IPv6 host is given). The account limit is strict, since it is what
// bounds guesses at one password from however many addresses; the source
// limit is generous, since everyone behind one proxy or NAT shares it,
// and it bounds spraying many names (unknown names cost a bcrypt compare
// too). Past its free failures each limit makes the next attempt wait,
// doubling per failure up to a cap: a lock always ends, and a busy shared
// address never waits longer than the source cap.
//
// A sign-in reserves its attempt, counted as a failure, before the
// password is checked, under one lock; success credits it back. So N
// parallel guesses can never run more checks than the limits allow.
type throttlePolicy struct {
	free   int           // failures before any wait
	base   time.Duration // the wait after the first failure past free
	max    time.Duration // the longest wait
	window time.Duration // how long a failure counts
}

var (
	accountThrottle = throttlePolicy{free: 5, base: time.Minute, max: time.Hour, window: 24 * time.Hour}
	sourceThrottle  = throttlePolicy{free: 20, base: time.Second, max: time.Minute, window: time.Hour}
)

// throttleMaxKeys bounds each of the two tables; when one is full the
// least recently used key is forgotten, so a flood of names or addresses
// cannot grow memory.
const throttleMaxKeys = 10000

// keptFailures is how many failure times a key keeps: enough past free
// for the wait to reach its cap (2^16 × base exceeds any sensible max).
const keptFailures = 16

type loginThrottle struct {
	mu                sync.Mutex
	now               func() time.Time
	accounts, sources *throttleTable
	// shared, when set, keeps the failures in the database instead of the
	// tables above, so every replica counts the same failures.
	shared SignInFailures
}

// SignInFailures is where a console that runs as several replicas keeps
// the throttle's failures (*models.Store): see models.ReserveSignIn.
type SignInFailures interface {
	ReserveSignIn(ctx context.Context, keys []models.ThrottleKey, local time.Time, admit func(now time.Time, recent [][]time.Time) bool) ([]int64, error)
	CreditSignIn(ctx context.Context, ids []int64) error
}

func newLoginThrottle(now func() time.Time, shared SignInFailures) *loginThrottle {
	return &loginThrottle{
		now:      now,
		accounts: newThrottleTable(accountThrottle, throttleMaxKeys),
		sources:  newThrottleTable(sourceThrottle, throttleMaxKeys),
		shared:   shared,
	}
}

// signInLockout says why a sign-in was refused before its check and when
// it may be tried again (rounded up to a whole second).
type signInLockout struct {
	Wait    time.Duration
	Until   time.Time
	Account bool // the account's limit (else the source's)
}

// signInAttempt is a reserved attempt: counted as a failure until it is
// credited.
type signInAttempt struct {
	t               *loginThrottle
	account, source string
	at              time.Time
	ids             []int64 // the shared rows, when the throttle is shared
}

// reserve takes an attempt for name from client (an IP address) if
// neither the account nor the source must wait, and counts it as a
// failure at once; otherwise it returns the lockout and counts nothing.
func (t *loginThrottle) reserve(ctx context.Context, name, client string) (*signInAttempt, *signInLockout, error) {
	account, source := accountKey(name), sourceKey(client)
	if t.shared != nil {
		return t.reserveShared(ctx, account, source)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if l := lockout(t.accounts.wait(account, now), t.sources.wait(source, now), now); l != nil {
		return nil, l, nil
	}
	t.accounts.add(account, now)
	t.sources.add(source, now)
	return &signInAttempt{t: t, account: account, source: source, at: now}, nil, nil
}

// reserveShared is reserve on the database's failures. Their times, their
// window and the wait are all on the database's clock (see
// models.ReserveSignIn), never this replica's: a replica whose clock runs
// ahead would find another's failures older than they are and let a
// locked account guess again.
func (t *loginThrottle) reserveShared(ctx context.Context, account, source string) (*signInAttempt, *signInLockout, error) {
	keys := []models.ThrottleKey{
		{Kind: "account", Key: account, Window: accountThrottle.window, Keep: accountThrottle.free + keptFailures},
		{Kind: "source", Key: source, Window: sourceThrottle.window, Keep: sourceThrottle.free + keptFailures},
	}
	var locked *signInLockout
	var at time.Time
	ids, err := t.shared.ReserveSignIn(ctx, keys, t.now(), func(now time.Time, recent [][]time.Time) bool {
		at = now
		locked = lockout(accountThrottle.waitAfter(recent[0], now), sourceThrottle.waitAfter(recent[1], now), now)
		return locked == nil
	})
	if err != nil || locked != nil {
		return nil, locked, err
	}
	return &signInAttempt{t: t, account: account, source: source, at: at, ids: ids}, nil, nil
}

// lockout is the lockout the two waits make at now, or nil when neither
// waits. Until is when the lock ends, rounded up to a whole second: not
// now plus the rounded wait, so every replica that refuses the attempt
// names the same time.
func lockout(byAccount, bySource time.Duration, now time.Time) *signInLockout {
	if byAccount <= 0 && bySource <= 0 {
		return nil
	}
	wait := max(byAccount, bySource)
	secs := (wait + time.Second - 1) / time.Second * time.Second
	until := now.Add(wait)
	if whole := until.Truncate(time.Second); whole.Before(until) {
		until = whole.Add(time.Second)
	}
	return &signInLockout{Wait: secs, Until: until, Account: byAccount >= bySource}
}

// credit takes back the reserved failure: the password was right, or no
// password was checked at all.
func (a *signInAttempt) credit(ctx context.Context) {
	if a.t.shared != nil {
		// Should this fail, the attempt stays counted: stricter, never
		// looser.
		_ = a.t.shared.CreditSignIn(ctx, a.ids)
		return
	}
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	a.t.accounts.remove(a.account, a.at)
	a.t.sources.remove(a.source, a.at)
}

// accountKey normalises a typed name, so "Ada" and " ada" count as one
// account (more merging only makes the limit stricter). A name longer
// than any user's is cut: it names no account, and keys stay small.
func accountKey(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if utf8.RuneCountInString(name) > app.MaxNameLength {
		name = string([]rune(name)[:app.MaxNameLength+1])
	}
	return name
}

// sourceKey is an IPv4 address as it is (an IPv4-mapped IPv6 address
// too), or the /64 of an IPv6 address: one host or LAN gets a whole /64,
// so a full address would give it 2^64 fresh budgets.
func sourceKey(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is4() {
		return addr.String()
	}
	p, _ := addr.Prefix(64)
	return p.String()
}

// throttleTable holds the recent failures of each key under one policy,
// least recently used keys forgotten first when it is full. Its caller
// holds the throttle's lock.
type throttleTable struct {
	policy throttlePolicy
	limit  int
	keys   map[string]*list.Element // of *throttleEntry
	lru    *list.List               // front: most recently used
}

type throttleEntry struct {
	key      string
	failures []time.Time // oldest first
}

func newThrottleTable(p throttlePolicy, limit int) *throttleTable {
	return &throttleTable{policy: p, limit: limit, keys: map[string]*list.Element{}, lru: list.New()}
}

// wait is how long key must wait before its next attempt at now.
func (tb *throttleTable) wait(key string, now time.Time) time.Duration {
	e := tb.recent(key, now)
	if e == nil {
		return 0
	}
	return tb.policy.wait(len(e.failures), e.failures[len(e.failures)-1], now)
}

// wait is how long a key with n recent failures, the last at last, must
// wait at now.
func (p throttlePolicy) wait(n int, last, now time.Time) time.Duration {
	if n < p.free {
		return 0
	}
	return last.Add(p.backoff(n - p.free)).Sub(now)
}

// waitAfter is wait for failures listed newest first (the database's
// order).
func (p throttlePolicy) waitAfter(failures []time.Time, now time.Time) time.Duration {
	if len(failures) == 0 {
		return 0
	}
	return p.wait(len(failures), failures[0], now)
}

// backoff is the wait after the extra-th failure past free: base,
// doubling, at most max.
func (p throttlePolicy) backoff(extra int) time.Duration {
	d := p.base
	for i := 0; i < extra && d < p.max; i++ {
		d *= 2
	}
	return min(d, p.max)
}

func (tb *throttleTable) add(key string, at time.Time) {
	e := tb.recent(key, at)
	if e == nil {
		if tb.lru.Len() >= tb.limit {
			oldest := tb.lru.Back()
			tb.lru.Remove(oldest)
			delete(tb.keys, oldest.Value.(*throttleEntry).key)
		}
		e = &throttleEntry{key: key}
		tb.keys[key] = tb.lru.PushFront(e)
	}
	e.failures = append(e.failures, at)
	if over := len(e.failures) - (tb.policy.free + keptFailures); over > 0 {
		e.failures = append(e.failures[:0], e.failures[over:]...)
	}
}

// remove takes back one failure of key made at at, if it is still kept.
func (tb *throttleTable) remove(key string, at time.Time) {
	el, ok := tb.keys[key]
	if !ok {
		return
	}
	e := el.Value.(*throttleEntry)
	for i := len(e.failures) - 1; i >= 0; i-- {
		if e.failures[i].Equal(at) {
			e.failures = append(e.failures[:i], e.failures[i+1:]...)
			break
		}
	}
	if len(e.failures) == 0 {
		tb.lru.Remove(el)
		delete(tb.keys, key)
	}
}

// recent drops key's failures older than the window and returns its
// entry, marked as just used, or nil when none is left.
func (tb *throttleTable) recent(key string, now time.Time) *throttleEntry {
	el, ok := tb.keys[key]
	if !ok {
		return nil
	}
	e := el.Value.(*throttleEntry)
	cutoff := now.Add(-tb.policy.window)
	i := 0
	for i < len(e.failures) && !e.failures[i].After(cutoff) {
		i++
	}
	e.failures = e.failures[i:]
	if len(e.failures) == 0 {
		tb.lru.Remove(el)
		delete(tb.keys, key)
		return nil
	}
	tb.lru.MoveToFront(el)
	return e
}
