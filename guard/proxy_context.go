package guard

import (
	"context"
	"net/url"
)

// The proxy's per-request contexts. Every proxied request carries its
// caller and credential to the decision and the record, and, once
// decided, the permit the dialer checks at connect time. Built with
// context.WithValue that was a context and a boxed value for each (six
// allocations, with the permit and the copied URL) on every request of a
// path that a bare forward proxy walks with none; these two types carry
// the same values in one allocation each and hand them out without
// copying. They add values only: cancellation is the embedded context's.

// proxyCaller is an authenticated request's Caller and the credential's
// user name (proxyUserKey).
type proxyCaller struct {
	caller Caller
	user   string
}

// value is the value of key among the caller's, if it is one of theirs.
func (w *proxyCaller) value(key any) (any, bool) {
	switch key.(type) {
	case callerKey:
		return &w.caller, true // CallerFrom copies it; nothing writes through it
	case proxyUserKey:
		return w.user, true
	}
	return nil, false
}

// proxyContext carries a proxyCaller over the request's context: a
// tunnel's, and a screened request's for its screen.
type proxyContext struct {
	context.Context
	who proxyCaller
}

func (c *proxyContext) Value(key any) any {
	if v, ok := c.who.value(key); ok {
		return v
	}
	return c.Context.Value(key)
}

// forwardContext is an absolute-URI request's context: over the
// cancellable context of its watchdog, its caller, the URL the decision
// normalised and the Decision itself, from which the dialer's permit is
// made when (and only when) the transport dials: a keep-alive request
// that reuses a pooled connection never needs one. Value reads d only for
// the permit, which only the dialer asks for, after the decision is
// stored; nothing writes u or d after that, so a dial on the transport's
// goroutine reads them safely. One context over the request's, not a
// caller's context under the watchdog's: every lookup of a value the
// request does not hold (the transport makes several) walks the chain.
type forwardContext struct {
	context.Context
	who proxyCaller
	u   url.URL
	d   Decision
	// rec is the request's Record once it is sent, kept here rather than
	// on the stack under the response writer's calls (see Proxy.forward).
	rec Record
	// watchdog bounds the request by the Timeout setting, cancelling
	// the context under this one.
	watchdog watchdog
	// flusher writes a body of unknown length (copyBody).
	flusher streamFlusher
}

func (c *forwardContext) Value(key any) any {
	if _, ok := key.(permitKey); ok {
		if !c.d.Allowed {
			return nil // a refused request has nothing to dial
		}
		return c.d.permit()
	}
	if v, ok := c.who.value(key); ok {
		return v
	}
	return c.Context.Value(key)
}
