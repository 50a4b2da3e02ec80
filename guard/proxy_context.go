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

// proxyContext carries the authenticated request's Caller and the
// credential's user name (proxyUserKey) over the request's context.
type proxyContext struct {
	context.Context
	caller Caller
	user   string
}

func (c *proxyContext) Value(key any) any {
	switch key.(type) {
	case callerKey:
		return &c.caller // CallerFrom copies it; nothing writes through it
	case proxyUserKey:
		return c.user
	}
	return c.Context.Value(key)
}

// forwardContext is an absolute-URI request's context once it is
// decided: over the cancellable context of its watchdog, the URL the
// decision normalised and the Decision itself, from which the dialer's
// permit is made when (and only when) the transport dials: a keep-alive
// request that reuses a pooled connection never needs one. It is used as
// a context only after the decision is stored, and nothing writes u or d
// after that, so a dial on the transport's goroutine reads them safely.
type forwardContext struct {
	context.Context
	u url.URL
	d Decision
	// rec is the request's Record once it is sent, kept here rather than
	// on the stack under the response writer's calls (see Proxy.forward).
	rec Record
	// watchdog bounds the request by the Timeout setting, cancelling
	// the context under this one.
	watchdog watchdog
}

func (c *forwardContext) Value(key any) any {
	if _, ok := key.(permitKey); ok {
		if !c.d.Allowed {
			return nil // a refused request has nothing to dial
		}
		return c.d.permit()
	}
	return c.Context.Value(key)
}
