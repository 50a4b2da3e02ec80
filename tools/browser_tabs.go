package tools

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// Tabs keeps one browser tab per conversation for the browser_* tools.
// The model never handles a tab: the server keys it by the agent and the
// conversation (the MCP session, or the API's thread), opens it on the
// first browser_open, and closes it after browser_idle without a call.
// At most browser_contexts tabs are live; a conversation over the limit
// is refused with the time the next tab frees up, rather than closing
// another conversation's tab under it (its refs and page would vanish
// mid-task, and a busy agent could starve the others).
//
// Each tab is its own browser context (cookies, storage and cache of its
// own) in the screenshot tool's one Chromium, with the guard's proxy and
// a proxy credential of its own, so every request it makes is decided
// and recorded as its conversation's.
type Tabs struct {
	shots    *Screenshotter
	settings func() Settings
	// confirm asks a person about a side effect; ConfirmSideEffect unless
	// a test sets it.
	confirm func(ctx context.Context, a SideEffect) *guard.Refusal
	now     func() time.Time

	mu     sync.Mutex
	tabs   map[tabKey]*tab
	closed bool

	// watching the setting, so that MCP clients hear when the tools come
	// and go (see browser_source.go).
	listeners []func()
	offered   bool
	stop      chan struct{}
	stopOnce  sync.Once
}

// tabKey is a conversation: the same thread name under two agents is two
// conversations.
type tabKey struct{ agent, thread string }

// NewTabs returns the browser tools' tab keeper. It launches nothing
// until a conversation opens a page. shots supplies the browser, the
// guard and its proxy.
func NewTabs(shots *Screenshotter, settings func() Settings) *Tabs {
	t := &Tabs{shots: shots, settings: settings, confirm: ConfirmSideEffect, now: time.Now, tabs: map[tabKey]*tab{}, stop: make(chan struct{})}
	t.offered = settings().Browser != BrowserOff
	shots.tabs = t
	go t.watch()
	return t
}

// SetConfirm replaces how side effects are confirmed (tests, and the
// transports that can ask a person).
func (t *Tabs) SetConfirm(f func(ctx context.Context, a SideEffect) *guard.Refusal) { t.confirm = f }

// Close closes every tab and stops watching the setting. The browser
// itself is the Screenshotter's to close.
func (t *Tabs) Close() {
	t.stopOnce.Do(func() { close(t.stop) })
	t.mu.Lock()
	t.closed = true
	all := make([]*tab, 0, len(t.tabs))
	for _, tb := range t.tabs {
		all = append(all, tb)
	}
	t.tabs = map[tabKey]*tab{}
	t.mu.Unlock()
	for _, tb := range all {
		tb.shut()
	}
}

// Live is how many conversations hold a tab now.
func (t *Tabs) Live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.tabs)
}

// existing returns the conversation's tab, or nil.
func (t *Tabs) existing(k tabKey) *tab {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tabs[k]
}

// reserve returns the conversation's tab, making an empty one (no browser
// context yet) when there is none and the limit allows.
func (t *Tabs) reserve(k tabKey, set Settings) (*tab, *guard.Refusal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tb := t.tabs[k]; tb != nil {
		return tb, nil
	}
	if t.closed {
		return nil, &guard.Refusal{Code: guard.CodeUnreachable, Reason: ReasonBrowser, Kind: guard.KindNetwork, Tool: BrowserOpenName,
			Message: "The browser is shutting down.", Fix: "Try again in a moment."}
	}
	if len(t.tabs) >= set.BrowserContexts {
		return nil, t.fullLocked(set)
	}
	tb := newTab(t, k)
	t.tabs[k] = tb
	return tb, nil
}

// fullLocked is the refusal of a conversation over browser_contexts: when
// the soonest idle tab closes.
func (t *Tabs) fullLocked(set Settings) *guard.Refusal {
	now := t.now()
	var soonest time.Duration = -1
	for _, tb := range t.tabs {
		left := tb.idleLeft(now, set.BrowserIdle)
		if soonest < 0 || left < soonest {
			soonest = left
		}
	}
	mins := max(1, int((soonest+time.Minute-1)/time.Minute))
	unit := "minutes"
	if mins == 1 {
		unit = "minute"
	}
	return &guard.Refusal{Code: guard.CodeTooMany, Reason: ReasonTabsFull, Kind: guard.KindPolicy, Tool: BrowserOpenName,
		Message: fmt.Sprintf("There are too many open browser conversations (%d, the most allowed at once).", set.BrowserContexts),
		Fix:     fmt.Sprintf("Try again in %d %s, when an idle conversation's tab closes; or do without the browser for now.", mins, unit),
		Remedy:  guard.ChangeSetting(browserContextsKey)}
}

// drop forgets tb if it is still the conversation's tab.
func (t *Tabs) drop(tb *tab) {
	t.mu.Lock()
	if t.tabs[tb.key] == tb {
		delete(t.tabs, tb.key)
	}
	t.mu.Unlock()
}

// expire closes tb if it has been idle for browser_idle; otherwise it
// sets its timer again for the rest (the setting may have changed).
func (t *Tabs) expire(tb *tab) {
	idle := t.settings().BrowserIdle
	if left := tb.idleLeft(t.now(), idle); left > 0 {
		tb.rearm(left)
		return
	}
	t.drop(tb)
	tb.shut()
}

// sortedKeys is the conversations in a stable order, for tests.
func (t *Tabs) sortedKeys() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for k := range t.tabs {
		out = append(out, k.agent+"/"+k.thread)
	}
	slices.Sort(out)
	return out
}

// browserContextsKey is the setting that bounds live tabs.
const browserContextsKey = "browser_contexts"
