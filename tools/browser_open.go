package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/guard"
)

const browserOpenDescription = `Open a web page in this conversation's browser tab and read it. Pass a full address (https://example.com/pricing) or localhost:3000.
The answer is the page's text, where every link, button and field is marked with a ref such as [e12 link "Pricing" → /pricing]; use the refs with browser_click and browser_type. Refs are valid until the next browser answer.
The first page opened fixes this conversation's site (e.g. example.com): the browser never leaves it. Every request is checked by the company's outbound policy.`

// BrowserOpenTool is browser_open.
func BrowserOpenTool(t *Tabs) Tool {
	return Tool{
		Name:        BrowserOpenName,
		Title:       "Open a web page in the browser",
		Description: browserOpenDescription,
		Schema: object([]string{"url"}, map[string]*jsonschema.Schema{
			"url": text("The address to open: https://example.com/page, or localhost:3000. Only http and https.", maxURLLength),
		}),
		Effect:  EffectRead,
		Example: `{"url": "https://status.example.com/"}`,
		Run: func(ctx context.Context, turn Turn, args map[string]json.RawMessage) Result {
			var in struct {
				URL string `json:"url"`
			}
			if err := decodeArgs(args, &in); err != nil {
				return inputRefusal(BrowserOpenName, err)
			}
			return t.Open(ctx, turn, in.URL)
		},
	}
}

// Open loads raw in the conversation's tab. The address, the policy and
// the conversation's site are all checked before a browser is touched.
func (t *Tabs) Open(ctx context.Context, turn Turn, raw string) Result {
	set := t.settings()
	key, r := t.conversation(BrowserOpenName, turn, set)
	if r != nil {
		return browserRefused(BrowserOpenName, r)
	}
	addr, r := browserAddress(raw)
	if r != nil {
		return browserRefused(BrowserOpenName, r)
	}
	dctx, cancel := context.WithTimeout(ctx, set.Guard.Timeout)
	d := t.shots.guard.Decide(dctx, addr)
	cancel()
	if !d.Allowed {
		return browserRefused(BrowserOpenName, d.Refusal())
	}
	target := d.URL.String()
	site := siteOf(d.URL.Hostname())
	if tb := t.existing(key); tb != nil {
		if have := tb.siteNow(); have != "" && have != site {
			return browserRefused(BrowserOpenName, otherSiteRefusal(target, have))
		}
	}
	tb, r := t.reserve(key, set)
	if r != nil {
		return browserRefused(BrowserOpenName, r)
	}
	tb.begin(callerOf(BrowserOpenName, turn), nil)
	defer tb.end()
	if t.existing(key) != tb {
		return browserRefused(BrowserOpenName, &guard.Refusal{Code: guard.CodeUnreachable, Reason: ReasonBrowser, Kind: guard.KindNetwork,
			Message: "The conversation's tab was closing.", Fix: "Try again."})
	}
	// Checked again under the call: another call may have fixed the site.
	if have := tb.siteNow(); tb.loaded && have != site {
		return browserRefused(BrowserOpenName, otherSiteRefusal(target, have))
	}
	res := tb.open(set, site, target)
	if !tb.loaded {
		// Nothing of the site loaded: the tab goes, and the site is not
		// fixed, so a mistyped first address does not bind the conversation.
		t.drop(tb)
		go tb.shut()
	}
	return res
}

// open loads target in the tab, as the conversation's site.
func (tb *tab) open(set Settings, site, target string) Result {
	if err := tb.start(set, site); err != nil {
		tb.crashed(err)
		return browserRefused(BrowserOpenName, BrowserUnavailable(BrowserOpenName, target, err))
	}
	timeout := float64(set.Guard.Timeout / time.Millisecond)
	tb.mu.Lock()
	tb.lastNav = target
	tb.mu.Unlock()
	resp, err := tb.page.Goto(target, playwright.PageGotoOptions{Timeout: &timeout, WaitUntil: playwright.WaitUntilStateLoad})
	if err != nil && tb.crashed(err) {
		return browserRefused(BrowserOpenName, tabBrowserRefusal(BrowserOpenName, target, err))
	}
	// The page itself was refused (a redirect hop onto another site, the
	// guard): that is the answer. A page that loaded and then tried to
	// leave (a meta refresh, a script) is answered as it is, with the
	// refusal among its events.
	if r := tb.navigationOutcome(); r != nil && err != nil {
		return browserRefused(BrowserOpenName, r)
	}
	if r := navigationRefusal(tb.cred, resp, err, target, set, tb.tabs.shots.guard.Wording()); r != nil {
		r.Tool = BrowserOpenName
		return browserRefused(BrowserOpenName, r)
	}
	tb.loaded = true
	tb.settle(set.Guard.Timeout)
	status := 0
	if resp != nil {
		status = resp.Status()
	}
	return tb.answer(BrowserOpenName, set, status, "")
}
