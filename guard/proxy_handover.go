package guard

import (
	"context"
	"net/http"
)

// A credential usually serves one call and ends with it. Some clients
// outlive a call: a browser tab kept open across an agent's tool calls
// uses one proxy credential (its context's) for all of them. Handover
// ends one call's share of such a credential and starts the next's, so
// each request and refusal is still tied to the call that caused it and
// a refusal reaches the log when its call ends, not when the tab closes.

// Handover records the refusal held for the credential's last call (with
// its note of the others), counts afresh, and charges every later request
// of the credential to next, until the next Handover or Revoke. It does
// nothing on a revoked credential.
func (e *EmbeddedProxy) Handover(c *CallCredential, next Caller) {
	if next.Tool == "" {
		next.Tool = proxyTool
	}
	e.mu.Lock()
	cred, ok := e.creds[c.Username]
	live := ok && cred.revokedAt.IsZero()
	if live {
		cred.caller = next
		e.creds[c.Username] = cred
	}
	e.mu.Unlock()
	if !live {
		return
	}
	if rec, ok := c.refusals.restart(); ok {
		e.proxy.g.Record(rec)
	}
}

// restart ends the book's current call like end, then opens a new one:
// the next call reads back only its own refusals.
func (b *refusalBook) restart() (Record, bool) {
	rec, ok := b.end()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.callRefusals = callRefusals{}
	b.byKey, b.order = map[string]*Refusal{}, nil
	return rec, ok
}

// ScreenOwn adds a second screen to the credential, run after Screen's:
// its refusals are the call's own, not a bystander's. It is for a client
// that knows a request of its call must not be made (a browser tab that
// may not leave its site, whose redirect hops it cannot stop itself): the
// request is answered with the refusal, never looked up or dialled, and
// recorded and kept as the call's, like a refusal of the policy.
func (c *CallCredential) ScreenOwn(check func(ctx context.Context, target string) *Refusal) {
	c.refusals.screen.mu.Lock()
	defer c.refusals.screen.mu.Unlock()
	c.refusals.screen.own = check
}

// screenedOwn runs the credential's own screen on r; it answers and
// records a refusal itself, and reports whether it did.
func (e *EmbeddedProxy) screenedOwn(ctx context.Context, w http.ResponseWriter, r *http.Request, book *refusalBook) bool {
	s := &book.screen
	s.mu.Lock()
	check := s.own
	s.mu.Unlock()
	if check == nil {
		return false
	}
	ref := check(ctx, proxiedTarget(r))
	if ref == nil {
		return false
	}
	e.proxy.recordProxied(ctx, r, Record{Refusal: ref, URL: ref.URL, Host: ref.Host, Port: ref.Port, Proxied: true})
	e.proxy.answer(w, ref)
	return true
}
