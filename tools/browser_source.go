package tools

import (
	"context"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// The browser tools' names.
const (
	BrowserOpenName  = "browser_open"
	BrowserReadName  = "browser_read"
	BrowserFindName  = "browser_find"
	BrowserClickName = "browser_click"
	BrowserTypeName  = "browser_type"
)

// browserTools builds the five tools; each lives in its own file.
var browserTools = []func(t *Tabs) Tool{BrowserOpenTool, BrowserReadTool, BrowserFindTool, BrowserClickTool, BrowserTypeTool}

// BrowserToolNames are the browser tools' names, reserved whether or not
// they are offered.
func BrowserToolNames() []string {
	return []string{BrowserOpenName, BrowserReadName, BrowserFindName, BrowserClickName, BrowserTypeName}
}

// Tools offers the browser tools while the browser setting is not off:
// the Tabs are a ToolSource, so the tool list follows the setting.
func (t *Tabs) Tools() []Tool {
	if t.settings().Browser == BrowserOff {
		return nil
	}
	out := make([]Tool, 0, len(browserTools))
	for _, build := range browserTools {
		out = append(out, build(t))
	}
	return out
}

// Withheld finds a browser tool while the setting withholds it: its
// call is refused with the reason (see Registry.Lookup).
func (t *Tabs) Withheld(name string) (Tool, bool) {
	for _, build := range browserTools {
		if tool := build(t); tool.Name == name {
			return tool, true
		}
	}
	return Tool{}, false
}

// OnChange registers f to be called when the tools come or go.
func (t *Tabs) OnChange(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.listeners = append(t.listeners, f)
}

// settingPoll is how often the setting is looked at: settings reload
// from the store without telling the tools, and an MCP client should hear
// within a moment that the browser tools came or went.
const settingPoll = time.Second

// watch tells the listeners when the browser setting turns the tools on
// or off, and closes every tab when it turns them off.
func (t *Tabs) watch() {
	tick := time.NewTicker(settingPoll)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		on := t.settings().Browser != BrowserOff
		t.mu.Lock()
		changed := on != t.offered
		t.offered = on
		listeners := append([]func(){}, t.listeners...)
		var closing []*tab
		if changed && !on {
			for k, tb := range t.tabs {
				closing = append(closing, tb)
				delete(t.tabs, k)
			}
		}
		t.mu.Unlock()
		for _, tb := range closing {
			go tb.shut()
		}
		if changed {
			for _, f := range listeners {
				f()
			}
		}
	}
}

// conversation checks that a browser call may run at all: the tools are
// on, and the call names its conversation.
func (t *Tabs) conversation(tool string, turn Turn, set Settings) (tabKey, *guard.Refusal) {
	if set.Browser == BrowserOff {
		return tabKey{}, &guard.Refusal{Code: guard.CodeForbidden, Reason: ReasonBrowserOff, Kind: guard.KindPolicy, Tool: tool,
			Message: "The browser tools are turned off here.", Fix: "Use fetch_url to read a page; an admin can turn the browser tools on.",
			Remedy: guard.ChangeSetting("browser")}
	}
	if turn.Thread == "" {
		return tabKey{}, &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonBadParams, Tool: tool,
			Message: "The browser keeps one tab per conversation, and this call names none.",
			Fix:     `Send the conversation's id as "thread" with every browser call, e.g. {"thread": "T-1", ...}; MCP sessions name theirs by themselves.`}
	}
	return tabKey{agent: turn.Agent, thread: turn.Thread}, nil
}

// callerOf is the guard's caller of one browser call.
func callerOf(tool string, turn Turn) guard.Caller {
	return turn.caller(tool)
}

// onOpenTab runs fn in the conversation's open tab, as one call. ask says
// whether side effects the page attempts during it may be put to a person
// (browser_click, browser_type).
func (t *Tabs) onOpenTab(ctx context.Context, tool string, turn Turn, ask bool, fn func(tb *tab, set Settings) Result) Result {
	set := t.settings()
	key, r := t.conversation(tool, turn, set)
	if r != nil {
		return browserRefused(tool, r)
	}
	noTab := &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonNoTab, Kind: guard.KindPolicy, Tool: tool,
		Message: "No page is open in this conversation (or its tab closed after " + FormatDuration(set.BrowserIdle) + " without a call).",
		Fix:     "Open a page with " + BrowserOpenName + " first, then use the refs of its answer."}
	tb := t.existing(key)
	if tb == nil {
		return browserRefused(tool, noTab)
	}
	caller := callerOf(tool, turn)
	var askCtx context.Context
	if ask {
		askCtx = guard.WithCaller(ctx, caller)
	}
	tb.begin(caller, askCtx)
	defer tb.end()
	if t.existing(key) != tb || !tb.loaded {
		return browserRefused(tool, noTab)
	}
	return fn(tb, set)
}
