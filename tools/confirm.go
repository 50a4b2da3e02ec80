package tools

import (
	"context"

	"github.com/outboundhq/outbound/guard"
)

// SideEffect is one action a tool is about to take that changes something
// at the far end: typing into a page's field, submitting a form, sending
// a request other than GET. It is what a person is shown to confirm.
type SideEffect struct {
	Tool  string // the tool about to act, e.g. browser_type
	What  string // in words, e.g. type "…" into the field Email
	Where string // the page's URL or the form's action
}

// ConfirmSideEffect asks for a person's go-ahead for a; nil means go
// ahead. This version is fail-closed: no confirmation channel is wired
// in, so every side effect is refused. (The confirmation through MCP
// elicitation replaces it.)
func ConfirmSideEffect(_ context.Context, a SideEffect) *guard.Refusal {
	return &guard.Refusal{Code: guard.CodeForbidden, Reason: ReasonUnconfirmed, Kind: guard.KindPolicy, Tool: a.Tool, URL: a.Where, Host: hostOf(a.Where),
		Message: "This would " + a.What + ", which needs a person's confirmation, and no confirmation is possible here.",
		Fix:     "Ask the person to do this step themselves, or an admin sets up confirmation for browser tools."}
}
