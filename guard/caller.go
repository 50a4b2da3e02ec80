package guard

import "context"

// Caller says who made a request, so that a refusal in the log can be
// traced to the agent, the conversation and the tool behind it.
type Caller struct {
	Tool    string `json:"tool,omitempty"`    // fetch_url, take_screenshot, call_integration, proxy…
	Agent   string `json:"agent,omitempty"`   // the API token's name
	Thread  string `json:"thread,omitempty"`  // the conversation or MCP session
	Trigger string `json:"trigger,omitempty"` // what started the turn, e.g. a ticket message id
	Ticket  string `json:"ticket,omitempty"`  // the help-desk ticket the call serves, as the agent named it
	// Service is the named service behind the tool, when there is one
	// (one integration of call_integration): a Scope may name it instead
	// of the tool.
	Service string `json:"service,omitempty"`
	// PublicOnly decides as if the default scope were PUBLIC WEB: the
	// entries admins listed still admit what they name (an internal host
	// stays reachable), but the list narrows nothing, and scoped and
	// report-only entries do not apply. It is for a person reading a page
	// through the server (a safe preview of a host agents are not allowed
	// to read yet), never for agents: every other check, the
	// internal-address floor first, still applies.
	PublicOnly bool `json:"public_only,omitempty"`
}

type callerKey struct{}

// WithCaller returns a context that carries c to the guard's records.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, &c)
}

// CallerFrom returns the Caller carried by ctx, or the zero Caller.
//
// The context holds a *Caller, never changed once stored: a context of
// the proxy's own (proxyContext) can then hand out the Caller it holds
// without boxing a copy on every lookup, of which a request makes several.
func CallerFrom(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey{}).(*Caller); ok {
		return *c
	}
	return Caller{}
}
