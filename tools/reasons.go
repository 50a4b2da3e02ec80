package tools

import "github.com/outboundhq/outbound/guard"

// The tools' own refusal reasons. The guard knows only what a request may
// reach; what a tool refuses on top (a page budget, a screenshot size, an
// integration's parameters) is the tool's business, named here, as values
// of the guard's Reason type so that every refusal has one shape.
const (
	ReasonContentType        guard.Reason = "content_type"        // a type fetch_url cannot read
	ReasonReadsPerTurn       guard.Reason = "reads_per_turn"      // the turn's page budget is spent
	ReasonBadStart           guard.Reason = "bad_start"           // fetch_url's start offset is outside the page
	ReasonBadSize            guard.Reason = "bad_size"            // a screenshot size outside the settings' limits
	ReasonBrowser            guard.Reason = "browser"             // the browser is not available here, or failed
	ReasonUnknownIntegration guard.Reason = "unknown_integration" // no integration has that name
	ReasonBadParams          guard.Reason = "bad_params"          // a tool's input, or an integration's parameters, missing or mistyped

	// Side effects in a conversation that has read the web (confirm.go).
	ReasonReadOnly             guard.Reason = "read_only"             // the browser setting allows no typing or submitting
	ReasonNeedsConfirmation    guard.Reason = "needs_confirmation"    // a person must confirm, and none could be asked
	ReasonConfirmationDeclined guard.Reason = "confirmation_declined" // the person declined or dismissed the confirmation
	ReasonUnrecorded           guard.Reason = "unrecorded"            // the database did not record that the conversation read the web
)

// Reasons lists every tool reason, for filters, documentation and the test
// that keeps the user guide complete; guard.Reasons lists the guard's.
var Reasons = []guard.Reason{
	ReasonContentType, ReasonReadsPerTurn, ReasonBadStart, ReasonBadSize, ReasonBrowser,
	ReasonUnknownIntegration, ReasonBadParams, ReasonBrowserOwn,
	ReasonReadOnly, ReasonNeedsConfirmation, ReasonConfirmationDeclined, ReasonUnrecorded,
	ReasonOtherSite, ReasonStaleRef, ReasonNoTab, ReasonTabsFull, ReasonUnconfirmed, ReasonBrowserOff, ReasonNotAField,
}
