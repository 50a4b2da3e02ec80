package tools

import "github.com/outboundhq/outbound/guard"

// The browser tools' own refusal reasons (see Reasons).
const (
	ReasonOtherSite   guard.Reason = "other_site"  // a navigation away from the conversation's one site
	ReasonStaleRef    guard.Reason = "stale_ref"   // an element ref that is not in the latest answer
	ReasonNoTab       guard.Reason = "no_tab"      // browser_read & co. before browser_open
	ReasonTabsFull    guard.Reason = "tabs_full"   // browser_contexts conversations already hold a tab
	ReasonUnconfirmed guard.Reason = "unconfirmed" // a side effect nobody confirmed
	ReasonBrowserOff  guard.Reason = "browser_off" // the browser setting is off
	ReasonNotAField   guard.Reason = "not_a_field" // browser_type on an element that takes no text
)
