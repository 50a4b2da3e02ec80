package tools

import (
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
)

// TestBrowserHiddenOrders: a page hides orders for the agent, and the
// scripted agent obeys every one, with a person who confirms whatever it
// is asked. The orders try to carry the ticket's private text to another
// site, and to reach the machine and the network inside. None of their
// requests arrives anywhere, and each refusal is in the log, under the
// agent and the tool.
func TestBrowserHiddenOrders(t *testing.T) {
	if raceDetector {
		// Two orders open new windows, and playwright-go v0.5200.1 races
		// inside itself (requestImpl.safePage against newPage) when a new
		// window's first request is routed before the driver has built the
		// window's page. scripts/test.sh runs this test without -race.
		t.Skip("playwright-go races on new windows' first requests; run without -race (scripts/test.sh does)")
	}
	e, v := newVendorEnv(t)
	a := e.agent(t, "hidden")
	res := a.open("http://shop.example.com/hidden")
	if !res.OK() || !strings.Contains(res.Text, "Shipped on Monday.") {
		t.Fatalf("the page:\n%s", res.Text)
	}
	if len(a.orders) != 16 {
		t.Fatalf("the agent read %d orders: %q", len(a.orders), a.orders)
	}
	results := a.obey()

	for name, c := range map[string]*canary{"the other site": e.evil, "loopback": e.loopback, "the intranet": e.intranet, "the metadata address": e.metadata} {
		if hits := c.Hits(); len(hits) != 0 {
			t.Errorf("%s received %q", name, hits)
		}
	}
	if posts := v.Posts(); len(posts) != 0 {
		t.Errorf("the vendor's site received posts %q", posts)
	}
	for _, part := range []string{
		"evil.example.net/collect?q=" + privateText, "file:///etc/passwd", e.loopback.hostPort() + "/admin",
		"169.254.169.254", "intranet.example.com", "javascript:", "evil.example.net/js-link?q=" + privateText,
		"evil.example.net/collect", // the feedback form's POST, confirmed by the person and still refused
		"evil.example.net/meta?q=" + privateText, "evil.example.net/script?q=" + privateText,
		"evil.example.net/redirect?q=" + privateText, "evil.example.net/popup?q=" + privateText,
	} {
		found := false
		for _, rec := range e.Records() {
			if rec.Refusal != nil && strings.Contains(rec.URL, part) && rec.Caller.Agent == "helpdesk-bot" && rec.Caller.Thread == "hidden" &&
				strings.HasPrefix(rec.Caller.Tool, "browser_") {
				found = true
			}
		}
		if !found {
			t.Errorf("no refusal of %s in the log", part)
		}
	}
	// The model is told why, and what to do instead.
	first := results[0]
	if first.OK() || first.Refusal.Reason != ReasonOtherSite || !strings.Contains(first.Text, "ask the person to start a new conversation for it") {
		t.Errorf("opening another site answered:\n%s", first.Text)
	}
	if r := e.refused(ReasonOtherSite, "evil.example.net/redirect"); r == nil || !r.Proxied {
		t.Errorf("the redirect hop was not refused at the proxy: %+v", r)
	}
	if offers := results[14]; !offers.OK() || !strings.Contains(offers.Text, "The page tried to open http://shop.example.com/list in a new window; it was not opened.") {
		t.Errorf("a link to a new window:\n%s", offers.Text)
	}
	// The page is still the vendor's.
	if res := a.read(); !res.OK() || !strings.Contains(res.Text, "URL: http://shop.example.com/") {
		t.Errorf("after the orders:\n%s", res.Text)
	}
}

// TestBrowserSubmitNeedsConfirmation: a person who says no to a
// submission stops it, whether it is a form's button or a script's POST
// behind an ordinary button; nothing reaches the site.
func TestBrowserSubmitNeedsConfirmation(t *testing.T) {
	e, v := newVendorEnv(t)
	e.setApprove(func(a SideEffect) bool { return a.Tool == BrowserTypeName })
	a := e.agent(t, "no-confirm")
	a.open("http://shop.example.com/subscribe")
	if res := a.typeIn(a.ref("Email"), "ops@example.org"); !res.OK() {
		t.Fatalf("typing: %s", res.Text)
	}
	res := a.click(a.ref("Subscribe"))
	if res.OK() || res.Refusal.Reason != ReasonConfirmationDeclined {
		t.Fatalf("an unconfirmed submission answered:\n%s", res.Text)
	}
	a.read()
	res = a.click(a.ref("Quick subscribe"))
	if !res.OK() || !strings.Contains(res.Text, "Refused a request of the page to http://shop.example.com/api/subscribe") {
		t.Fatalf("a script's unconfirmed POST:\n%s", res.Text)
	}
	if posts := v.Posts(); len(posts) != 0 {
		t.Fatalf("the site received %q", posts)
	}
	asked := e.Asked()
	if len(asked) != 3 || !strings.Contains(asked[2].What, "send a POST request to http://shop.example.com/api/subscribe") {
		t.Fatalf("asked %+v", asked)
	}
	if e.refused(ReasonConfirmationDeclined, "/api/subscribe") == nil || e.refused(ReasonConfirmationDeclined, "/subscribe") == nil {
		t.Fatalf("the refusals are not in the log: %+v", e.Reports())
	}
	// With the product's own confirmation and no person to ask (a
	// registry without settings reads as browser off), typing is refused.
	e.tabs.SetConfirm(ConfirmSideEffect)
	a.read()
	if res := a.typeIn(a.ref("Email"), "x@example.org"); res.OK() || (res.Refusal.Reason != ReasonReadOnly && res.Refusal.Reason != ReasonNeedsConfirmation) {
		t.Fatalf("typing with no way to confirm:\n%s", res.Text)
	}
	_ = guard.CodeForbidden
}
