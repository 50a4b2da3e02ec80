package tools

import (
	"log/slog"

	"github.com/outboundhq/outbound/guard"
)

// The model never reads set-up advice: what Chromium, the driver or node
// lack is an admin's business, and `console doctor` says it with the fix.
// The cause goes to the server's log; the agent reads only that the
// browser is not available, and who can help.

// AgentBrowserFix is the fix every browser-tool refusal of a missing or
// broken browser gives.
const AgentBrowserFix = "An admin can run `console doctor`, which checks the browser set-up and says how to fix it."

// BrowserUnavailable is the refusal of tool when the browser cannot start:
// err is logged for the admin, never shown to the agent.
func BrowserUnavailable(tool, url string, err error) *guard.Refusal {
	slog.Warn("the browser is not available; run `console doctor`", "tool", tool, "error", err.Error())
	return &guard.Refusal{Code: guard.CodeUnreachable, Reason: ReasonBrowser, Kind: guard.KindNetwork, Tool: tool, URL: url, Host: hostOf(url),
		Message: "The browser is not available here.", Fix: AgentBrowserFix}
}

// BrowserFailed is the refusal of tool when the running browser failed
// (crashed, or the page broke it): err is logged, not shown.
func BrowserFailed(tool, url string, err error) *guard.Refusal {
	slog.Warn("the browser failed", "tool", tool, "url", url, "error", err.Error())
	return &guard.Refusal{Code: guard.CodeUnreachable, Reason: ReasonBrowser, Kind: guard.KindNetwork, Tool: tool, URL: url, Host: hostOf(url),
		Message: "The browser failed while loading the page.", Fix: "Try again; if it keeps failing, an admin can run `console doctor`."}
}
