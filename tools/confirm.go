package tools

// Side effects in a conversation that has read the web are where a page's
// hidden orders would do harm: typing private text into a form, submitting
// it, sending a request to an integration. So a tool asks before each one,
// through ConfirmSideEffect, and the rule is decided here, once, for every
// tool and transport:
//
//   - browser read_only: no typing or submitting at all;
//   - browser confirm (and integrations, whatever the browser setting):
//     once web content has entered the conversation, a person confirms
//     every side effect, every time; no stored approval counts;
//   - a conversation that has read nothing from the web goes ahead.
//
// Who the person is depends on the door the call came in by, so each
// transport puts its Confirmer in the call's context (WithConfirmer): MCP
// asks through elicitation, the command line asks at the terminal, and
// the JSON API, with no person in the loop, refuses.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// SideEffect is one action a tool is about to take: the tool, exactly what
// it will type or send, and where (the page or the service).
type SideEffect struct {
	Tool  string
	What  string
	Where string
}

// Answer is what became of a request for confirmation.
type Answer int

const (
	// Unasked: no person could be asked here; Why and Fix say why and how
	// to make confirmation possible.
	Unasked Answer = iota
	// Accepted: a person confirmed this one action.
	Accepted
	// Declined: a person said no, or dismissed the question.
	Declined
	// Pending: the question is on its way to the person; the call ends
	// now and comes again with the answer (MCP's multi-round-trip).
	Pending
)

// Confirmation is a Confirmer's answer.
type Confirmation struct {
	Answer Answer
	// Why and Fix word an Unasked answer for the agent.
	Why, Fix string
}

// Confirmer asks a person whether a side effect may go ahead. Each
// transport sets its own with WithConfirmer.
type Confirmer func(ctx context.Context, a SideEffect) Confirmation

type confirmerKey struct{}

// WithConfirmer returns ctx carrying c, the way this transport asks a
// person. A call without one cannot be confirmed, and is refused.
func WithConfirmer(ctx context.Context, c Confirmer) context.Context {
	return context.WithValue(ctx, confirmerKey{}, c)
}

// NoPerson is the Confirmer of a transport with nobody to ask: why says
// so, fix how the agent gets a person's confirmation elsewhere.
func NoPerson(why, fix string) Confirmer {
	return func(context.Context, SideEffect) Confirmation {
		return Confirmation{Answer: Unasked, Why: why, Fix: fix}
	}
}

// conversation is what ConfirmSideEffect knows about the call it is asked
// from: Registry.Call puts it in the context.
type conversation struct {
	thread   string
	reads    *webReads
	settings func() Settings
	now      func() time.Time

	mu sync.Mutex
	// pending is set when a question is on its way to a person: the call
	// is not over, so it is not recorded.
	pending bool
}

type conversationKey struct{}

func withConversation(ctx context.Context, c *conversation) context.Context {
	return context.WithValue(ctx, conversationKey{}, c)
}

func (c *conversation) mode() BrowserMode {
	if c == nil || c.settings == nil {
		return BrowserOff
	}
	return c.settings().Browser
}

// readWeb reports whether web content has entered the conversation, on
// this replica or any other. A call from outside the registry has no
// known conversation, and counts as having read the web.
func (c *conversation) readWeb(ctx context.Context) bool {
	if c == nil || c.reads == nil {
		return true
	}
	return c.reads.read(ctx, c.thread, c.now())
}

func (c *conversation) isPending() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending
}

// ConfirmSideEffect decides whether a browser tool may take the side
// effect a (typing, or a click that submits or sends): nil to go ahead,
// or the refusal to answer with. Under the browser setting read_only (or
// off) it is always refused; under confirm, a conversation that has read
// the web needs a person's yes for this one action.
func ConfirmSideEffect(ctx context.Context, a SideEffect) *guard.Refusal {
	conv, _ := ctx.Value(conversationKey{}).(*conversation)
	switch conv.mode() {
	case BrowserConfirm:
	case BrowserReadOnly:
		return sideEffectRefusal(a, ReasonReadOnly,
			"This deployment lets agents read pages but not type into them or submit them (the browser setting is read_only).",
			"Ask the person to do this step themselves; an admin can set browser to confirm.", guard.ChangeSetting(settingBrowser))
	default:
		return sideEffectRefusal(a, ReasonReadOnly, "The browser tools are turned off here.",
			"Ask the person to do this step themselves.", guard.Remedy{})
	}
	return confirmIfReadWeb(ctx, a)
}

// confirmIfReadWeb lets a go ahead in a conversation that has read nothing
// from the web, and otherwise asks a person through the transport's
// Confirmer: integrations with a method other than GET use it directly.
func confirmIfReadWeb(ctx context.Context, a SideEffect) *guard.Refusal {
	conv, _ := ctx.Value(conversationKey{}).(*conversation)
	if !conv.readWeb(ctx) {
		return nil
	}
	ask, _ := ctx.Value(confirmerKey{}).(Confirmer)
	if ask == nil {
		ask = NoPerson("Nobody can be asked to confirm it here.", "Ask the person to do this step themselves.")
	}
	got := ask(ctx, a)
	switch got.Answer {
	case Accepted:
		return nil
	case Declined:
		return sideEffectRefusal(a, ReasonConfirmationDeclined, "The person did not confirm it.",
			"Do not try it again unless the person asks you to; ask them what to do instead.", guard.Remedy{})
	case Pending:
		if conv != nil {
			conv.mu.Lock()
			conv.pending = true
			conv.mu.Unlock()
		}
		return sideEffectRefusal(a, ReasonNeedsConfirmation, "It waits for a person's confirmation.", "Wait for the person's answer.", guard.Remedy{})
	}
	why := strings.TrimSpace(got.Why + " " + "This conversation has read the web, so each such step needs a person's confirmation, every time.")
	fix := got.Fix
	if fix == "" {
		fix = "Ask the person to do this step themselves."
	}
	return sideEffectRefusal(a, ReasonNeedsConfirmation, why, fix, guard.Remedy{})
}

func sideEffectRefusal(a SideEffect, reason guard.Reason, why, fix string, remedy guard.Remedy) *guard.Refusal {
	what := "This step"
	if a.Where != "" {
		what = "This step on " + a.Where
	}
	return &guard.Refusal{Code: guard.CodeForbidden, Reason: reason, Kind: guard.KindPolicy, Tool: a.Tool, URL: urlOrEmpty(a.Where), Host: hostOf(urlOrEmpty(a.Where)),
		Message: fmt.Sprintf("%s was not taken. %s", what, why), Fix: fix, Remedy: remedy}
}

// urlOrEmpty is where when it is a web address, for the refusal's URL.
func urlOrEmpty(where string) string {
	if webScheme(where) {
		return where
	}
	return ""
}

// ConfirmationQuestion is what a person is asked: exactly what will be
// typed or sent, and where, and why they are asked.
func ConfirmationQuestion(a SideEffect) string {
	var b strings.Builder
	fmt.Fprintf(&b, "An agent wants to use %s", a.Tool)
	if a.Where != "" {
		fmt.Fprintf(&b, " on %s", a.Where)
	}
	b.WriteString(":\n\n")
	b.WriteString(a.What)
	b.WriteString("\n\nThis conversation has read web pages or service answers, which can carry hidden orders. Allow this one action only if you asked for it.")
	return b.String()
}
