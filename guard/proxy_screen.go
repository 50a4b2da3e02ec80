package guard

import (
	"context"
	"net/http"
	"sync"
)

// A screen is a call's own check of its client's requests, run before the
// guard decides them. A browser sends its own background requests (form
// autofill, hints, time checks) through the proxy a page was given, where
// they would be decided, and perhaps allowed, as the call's; the call that
// knows which requests its page made refuses the others here, and they are
// recorded under the screen's own caller, never the call's.
type screen struct {
	mu    sync.Mutex
	by    Caller
	check func(ctx context.Context, target string) *Refusal
	own   func(ctx context.Context, target string) *Refusal // see ScreenOwn
}

// Screen makes every later request with the credential pass check before
// it is decided. target is what the client asked for: the absolute URL,
// or https://HOST:PORT/ for a CONNECT. A request check refuses is answered
// with that refusal and recorded under by, once, never as the call's: it
// neither reaches the call's refusals nor counts among them.
func (c *CallCredential) Screen(by Caller, check func(ctx context.Context, target string) *Refusal) {
	if by.Tool == "" {
		by.Tool = proxyTool
	}
	c.refusals.screen.mu.Lock()
	defer c.refusals.screen.mu.Unlock()
	c.refusals.screen.by, c.refusals.screen.check = by, check
}

// screened runs user's screen on r, if it has one, and answers and records
// a refusal itself; it reports whether it did.
func (e *EmbeddedProxy) screened(ctx context.Context, w http.ResponseWriter, r *http.Request, user string) bool {
	e.mu.RLock()
	c, ok := e.creds[user]
	e.mu.RUnlock()
	if !ok || c.refusals == nil {
		return false
	}
	s := &c.refusals.screen
	s.mu.Lock()
	by, check := s.by, s.check
	s.mu.Unlock()
	if check == nil {
		return e.screenedOwn(ctx, w, r, c.refusals)
	}
	ref := check(ctx, proxiedTarget(r))
	if ref == nil {
		return e.screenedOwn(ctx, w, r, c.refusals)
	}
	ctx = WithCaller(ctx, by)
	e.proxy.g.record(ctx, Record{Refusal: ref, URL: ref.URL, Host: ref.Host, Port: ref.Port, Proxied: true})
	e.proxy.answer(w, ref)
	return true
}
