package tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/guard"
)

// tab is one conversation's browser context and page. The tool calls of a
// conversation run one at a time (call); the page's events (requests,
// loads, popups, dialogs) arrive on the driver's goroutines and change
// only the fields under mu.
type tab struct {
	tabs *Tabs
	key  tabKey

	call sync.Mutex // held for the whole of one tool call

	// Set when the first page opens, read and changed under call.
	browser  ShotBrowser
	bctx     playwright.BrowserContext
	page     playwright.Page
	cred     *guard.CallCredential
	hosts    *pageHosts // every host the page asked for (the proxy's screen of Chromium's own requests)
	approved *pageHosts // other sites' hosts the page loads subresources from
	loaded   bool       // a page of the site has loaded: the site is fixed

	// The refs of the latest answer: e{base} … e{base+len(elements)-1};
	// next is the first ref the next answer hands out.
	base, next int
	elements   playwright.JSHandle // the latest answer's elements, in ref order
	count      int

	mu     sync.Mutex
	site   string       // the conversation's one site, fixed by the first page that loads
	caller guard.Caller // the call in progress, or the last one
	askCtx context.Context
	writes bool // a confirmed submit: the page may send non-GET requests to its own site
	events []string
	// popupTops are the main frames of the new windows the driver has
	// built, and popupSig is closed (and replaced) when one more is: a new
	// window's requests are answered only once its page exists.
	popupTops map[playwright.Frame]bool
	popupSig  chan struct{}
	navRefus  *guard.Refusal // the latest main-frame navigation refused in this call
	lastNav   string         // the latest main-frame navigation request in this call
	navDone   bool
	navSig    chan struct{} // closed and replaced when a navigation starts or ends
	lastUsed  time.Time
	busy      bool
	timer     *time.Timer
	shutOnce  sync.Once
}

func newTab(t *Tabs, k tabKey) *tab {
	return &tab{tabs: t, key: k, next: 1, navDone: true, navSig: make(chan struct{}), lastUsed: t.now(),
		popupTops: map[playwright.Frame]bool{}, popupSig: make(chan struct{})}
}

// Events a page causes that the agent did not ask for are told in the
// next answer; a page cannot fill the answer with them.
const maxTabEvents = 8

// settleGrace is how long after an action the tab waits for a navigation
// it may have started (a link, a form, a meta refresh, a script's
// redirect) before reading the page.
const settleGrace = 200 * time.Millisecond

// popupGrace is how long a new window lives when it asks for nothing the
// route could refuse.
const popupGrace = 5 * time.Second

// begin starts a call of the conversation's tab: calls run one at a time,
// and the tab's proxy credential is handed to this call, so that what the
// page does now is recorded as this call's. ask, when set, is the context
// in which a side effect the page attempts may be put to a person
// (browser_click and browser_type); in other calls such requests are
// refused outright.
func (tb *tab) begin(caller guard.Caller, ask context.Context) {
	tb.call.Lock()
	tb.mu.Lock()
	tb.caller, tb.askCtx, tb.writes = caller, ask, false
	tb.navRefus, tb.lastNav = nil, ""
	tb.busy = true
	tb.mu.Unlock()
	if tb.cred != nil {
		tb.tabs.shots.proxy.Handover(tb.cred, caller)
	}
}

// end ends the call: its held refusals are recorded, and the idle clock
// starts again.
func (tb *tab) end() {
	tb.mu.Lock()
	tb.askCtx, tb.writes, tb.busy = nil, false, false
	tb.lastUsed = tb.tabs.now()
	caller := tb.caller
	tb.mu.Unlock()
	if tb.cred != nil {
		tb.tabs.shots.proxy.Handover(tb.cred, caller)
	}
	tb.rearm(tb.tabs.settings().BrowserIdle)
	tb.call.Unlock()
}

// idleLeft is how long the tab has before it closes for idleness.
func (tb *tab) idleLeft(now time.Time, idle time.Duration) time.Duration {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.busy {
		return idle
	}
	return max(0, tb.lastUsed.Add(idle).Sub(now))
}

func (tb *tab) rearm(d time.Duration) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.timer != nil {
		tb.timer.Stop()
	}
	tb.timer = time.AfterFunc(d, func() { tb.tabs.expire(tb) })
}

// shut closes the tab's context, which returns its memory, and revokes
// its credential (recording what it still held). Safe to call twice.
func (tb *tab) shut() {
	tb.shutOnce.Do(func() {
		tb.mu.Lock()
		if tb.timer != nil {
			tb.timer.Stop()
		}
		tb.mu.Unlock()
		if tb.bctx != nil {
			_ = tb.bctx.Close()
		}
		if tb.cred != nil {
			tb.cred.Revoke()
		}
	})
}

// siteNow is the conversation's site, "" before the first open.
func (tb *tab) siteNow() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.site
}

// start opens the tab's browser context and page, set to keep to site.
func (tb *tab) start(set Settings, site string) error {
	tb.mu.Lock()
	tb.site = site
	tb.mu.Unlock()
	if tb.page != nil {
		return nil
	}
	s := tb.tabs.shots
	b, err := s.ensureBrowser()
	if err != nil {
		return err
	}
	tb.browser = b
	tb.mu.Lock()
	caller := tb.caller
	tb.mu.Unlock()
	tb.cred = s.proxy.Credential(caller)
	tb.hosts, tb.approved = newPageHosts(), newPageHosts()
	// Chromium's own requests are refused as the browser's (as for
	// screenshots); a request of the page to another site that the route
	// below did not pass as a subresource (a redirect hop, which routes
	// never see) is refused as the call's.
	tb.cred.Screen(guard.Caller{Tool: BrowserCaller}, tb.hosts.screen)
	tb.cred.ScreenOwn(tb.screenOwn)
	bctx, err := b.NewContext(playwright.BrowserNewContextOptions{
		Proxy:           &playwright.Proxy{Server: s.proxy.URL(), Username: &tb.cred.Username, Password: &tb.cred.Password},
		Viewport:        &playwright.Size{Width: defaultShotWidth, Height: defaultShotHeight},
		ServiceWorkers:  playwright.ServiceWorkerPolicyBlock,
		AcceptDownloads: playwright.Bool(false),
		UserAgent:       playwright.String(set.Guard.UserAgent),
	})
	if err != nil {
		return err
	}
	tb.bctx = bctx
	if err := bctx.Route("**/*", tb.route); err != nil {
		return err
	}
	bctx.OnRequest(func(r playwright.Request) { tb.hosts.add(r.URL()) })
	page, err := bctx.NewPage()
	if err != nil {
		return err
	}
	tb.mu.Lock()
	tb.page = page
	tb.mu.Unlock()
	// Event handlers run on the driver's one dispatching goroutine, so
	// whatever they ask of the browser is asked from another: waiting
	// there for an answer would wait for ever.
	//
	// A new window (window.open, target=_blank) loads nothing: the route
	// refuses its navigation (and closes it), or it is closed shortly.
	bctx.OnPage(func(p playwright.Page) {
		if !tb.isMain(p) {
			tb.mu.Lock()
			tb.popupTops[p.MainFrame()] = true
			close(tb.popupSig)
			tb.popupSig = make(chan struct{})
			tb.mu.Unlock()
			time.AfterFunc(popupGrace, func() {
				_ = p.Close()
				tb.mu.Lock()
				delete(tb.popupTops, p.MainFrame())
				tb.mu.Unlock()
			})
		}
	})
	page.OnWebSocket(func(ws playwright.WebSocket) {
		tb.hosts.add(ws.URL())
		if siteOfURL(ws.URL()) != tb.siteNow() {
			tb.approved.add(ws.URL())
		}
	})
	page.OnDialog(func(d playwright.Dialog) {
		tb.event(fmt.Sprintf("The page showed a %s dialog saying %q; it was dismissed.", d.Type(), cut(d.Message(), 200)))
		go d.Dismiss()
	})
	page.OnRequest(func(r playwright.Request) {
		if r.IsNavigationRequest() && r.Frame() == page.MainFrame() {
			tb.navState(r.URL(), false)
		}
	})
	page.OnRequestFailed(func(r playwright.Request) {
		if r.IsNavigationRequest() && r.Frame() == page.MainFrame() {
			tb.navState("", true)
		}
	})
	page.OnLoad(func(playwright.Page) { tb.navState("", true) })
	return nil
}

func (tb *tab) isMain(p playwright.Page) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.page == nil || tb.page == p
}

// navState notes a main-frame navigation starting (url set) or ending.
func (tb *tab) navState(url string, done bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if url != "" {
		tb.lastNav = url
	}
	tb.navDone = done
	close(tb.navSig)
	tb.navSig = make(chan struct{})
}

// event notes something the page did that the next answer tells.
func (tb *tab) event(line string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.events) < maxTabEvents {
		tb.events = append(tb.events, line)
	}
}

// takeEvents returns and forgets the events noted so far.
func (tb *tab) takeEvents() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	out := tb.events
	tb.events = nil
	return out
}

// route sees every request the tab's pages make before it leaves
// Chromium (a redirect's next hop excepted: the proxy's own screen
// catches those). It keeps the tab on its site, keeps new windows from
// loading, passes other sites' subresources on to the guard, and holds
// requests that may change something for a person's confirmation.
func (tb *tab) route(r playwright.Route) {
	req := r.Request()
	u := req.URL()
	nav := req.IsNavigationRequest()
	if !webScheme(u) {
		_ = r.Abort("blockedbyclient")
		if nav && !harmlessScheme(u) {
			tb.refuse(&guard.Refusal{Code: guard.CodeInvalid, Reason: guard.ReasonScheme, Kind: guard.KindPolicy, URL: firstLine(u),
				Message: "The page tried to open a non-web address, which is refused.", Fix: "Use http:// or https:// pages of this site."}, req)
		}
		return
	}
	site := siteOfURL(u)
	own := site == tb.siteNow()
	// A request of another page than the tab's own is a new window's.
	// It is told by its frame's top frame, never by asking the frame for
	// its page: a new window's first request arrives before the driver
	// has built its page, and reading it then races with the driver.
	inPopup := false
	if f := req.Frame(); f == nil || !tb.ownsFrame(f) {
		inPopup = true
	}
	if nav && !own {
		tb.stop(r, inPopup)
		tb.refuse(tb.otherSite(u), req)
		return
	}
	if inPopup {
		tb.stop(r, true)
		if nav {
			tb.event("The page tried to open " + cut(u, 300) + " in a new window; it was not opened. To read it, open it with " + BrowserOpenName + ".")
		}
		return
	}
	if !own {
		tb.approved.add(u)
	}
	switch req.Method() {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if ref := tb.mayWrite(req, own); ref != nil {
			_ = r.Abort("blockedbyclient")
			tb.refuse(ref, req)
			return
		}
	}
	tb.hosts.add(u)
	_ = r.Continue()
}

// stop keeps a request from leaving Chromium. A new window's request is
// held until the driver has built the window's page (awaitPopup); the
// window itself is closed by the context's page handler.
func (tb *tab) stop(r playwright.Route, popup bool) {
	if popup {
		tb.awaitPopup(r.Request().Frame())
	}
	_ = r.Abort("blockedbyclient")
}

// popupWait bounds how long a new window's request waits for the driver
// to build its page.
const popupWait = 3 * time.Second

// awaitPopup waits until the driver has built the page of the new window
// f belongs to. playwright-go's Abort reads the request's page, which the
// driver writes when it builds the window's page, often after the
// window's first request reached the route: handling it before would
// race inside the driver. The context's page handler announces each new
// window (popupSig), which orders the driver's write before the read.
func (tb *tab) awaitPopup(f playwright.Frame) {
	if f == nil {
		return
	}
	top := f
	for parent := top.ParentFrame(); parent != nil; parent = top.ParentFrame() {
		top = parent
	}
	deadline := time.After(popupWait)
	for {
		tb.mu.Lock()
		known, sig := tb.popupTops[top], tb.popupSig
		tb.mu.Unlock()
		if known {
			return
		}
		select {
		case <-sig:
		case <-deadline:
			return
		}
	}
}

// ownsFrame reports whether f is the tab's page's main frame or one of
// its frames, by walking up to its top frame.
func (tb *tab) ownsFrame(f playwright.Frame) bool {
	tb.mu.Lock()
	p := tb.page
	tb.mu.Unlock()
	if p == nil {
		return true
	}
	top := f
	for parent := top.ParentFrame(); parent != nil; parent = top.ParentFrame() {
		top = parent
	}
	return top == p.MainFrame()
}

// mayWrite decides a request that may change something at the far end
// (POST, PUT, DELETE…): passed when it is the form submission a person
// just confirmed, put to a person when the agent's click or typing caused
// it, refused when the page sends it on its own.
func (tb *tab) mayWrite(req playwright.Request, own bool) *guard.Refusal {
	tb.mu.Lock()
	ask, writes, tool := tb.askCtx, tb.writes, tb.caller.Tool
	tb.mu.Unlock()
	if writes && own {
		return nil
	}
	u := req.URL()
	if ask == nil {
		return &guard.Refusal{Code: guard.CodeForbidden, Reason: ReasonUnconfirmed, Kind: guard.KindPolicy, URL: u, Host: hostOf(u),
			Message: fmt.Sprintf("The page sent a %s request to %s by itself; a request that may change something is sent only for the agent's own click or typing, with a person's confirmation.", req.Method(), hostOf(u)),
			Fix:     "Nothing to do unless the page needs it; then click the page's own button for it."}
	}
	return tb.tabs.confirm(ask, SideEffect{Tool: tool, What: fmt.Sprintf("let the page send a %s request to %s", req.Method(), cut(u, 300)), Where: u})
}

// refuse records a refusal of one of the page's requests, as the call's,
// and tells it in the next answer; a main-frame navigation's refusal is
// also the answer of a click that caused it.
func (tb *tab) refuse(ref *guard.Refusal, req playwright.Request) {
	tb.mu.Lock()
	caller := tb.caller
	main := req.IsNavigationRequest() && tb.page != nil && req.Frame() == tb.page.MainFrame()
	if main {
		tb.navRefus = ref
	}
	tb.mu.Unlock()
	ref.Tool, ref.Agent = caller.Tool, caller.Agent
	tb.tabs.shots.guard.Record(guard.Record{Caller: caller, Refusal: ref, URL: ref.URL, Host: ref.Host, Port: portOf(ref.URL), Proxied: true})
	what := "a request"
	if main {
		what = "a navigation"
	}
	tb.event(fmt.Sprintf("Refused %s of the page to %s: %s", what, cut(ref.URL, 300), ref.Message))
}

// screenOwn is the proxy's screen of the tab's requests: another site's
// host is passed only when the route passed a subresource of it (or the
// page opened a websocket to it); anything else, in practice a redirect
// hop onto another site, is refused as the call's.
func (tb *tab) screenOwn(ctx context.Context, target string) *guard.Refusal {
	if siteOfURL(target) == tb.siteNow() {
		return nil
	}
	if tb.approved.await(ctx, target, pageHostsWait) {
		return nil
	}
	r := tb.otherSite(target)
	r.Message = "A redirect led to " + hostOf(target) + ", on another site (" + siteOfURL(target) + ") than this conversation's (" + tb.siteNow() + "). A browser conversation stays on the one site it opened first."
	return r
}

// otherSite is the refusal of leaving the conversation's site.
func (tb *tab) otherSite(u string) *guard.Refusal {
	return otherSiteRefusal(u, tb.siteNow())
}

func otherSiteRefusal(u, site string) *guard.Refusal {
	other := siteOfURL(u)
	return &guard.Refusal{Code: guard.CodeForbidden, Reason: ReasonOtherSite, Kind: guard.KindPolicy, URL: u, Host: hostOf(u),
		Message: fmt.Sprintf("%s is on another site (%s) than the one this conversation's browser is on (%s). A browser conversation stays on the first site it opened, so that nothing read here can be carried to another site.", hostOf(u), other, site),
		Fix:     fmt.Sprintf("Stay on %s; to use %s, ask the person to start a new conversation for it.", site, other)}
}

// settle waits, after an action, for a navigation it started to finish,
// so that the answer is the page the action led to. It gives a meta
// refresh or a script's redirect a moment to start too.
func (tb *tab) settle(limit time.Duration) {
	end := time.Now().Add(limit)
	for range 6 {
		time.Sleep(settleGrace)
		tb.mu.Lock()
		done, sig := tb.navDone, tb.navSig
		tb.mu.Unlock()
		if done {
			break
		}
		left := time.Until(end)
		if left <= 0 {
			return
		}
		select {
		case <-sig:
		case <-time.After(left):
			return
		}
	}
	if left := time.Until(end); left > 0 {
		ms := float64(left / time.Millisecond)
		_ = tb.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad, Timeout: &ms})
	}
}

// navigationOutcome is the refusal of this call's latest main-frame
// navigation, if one was refused: by the route (another site), or by the
// proxy (the guard, or the proxy's screen of a redirect hop).
func (tb *tab) navigationOutcome() *guard.Refusal {
	tb.mu.Lock()
	ref, nav := tb.navRefus, tb.lastNav
	tb.mu.Unlock()
	if ref != nil {
		return ref
	}
	if nav != "" && tb.cred != nil {
		return tb.cred.Refusal(nav)
	}
	return nil
}

// crashed reports a browser that went away, so the tab is dropped and the
// next call starts afresh.
func (tb *tab) crashed(err error) bool {
	if errors.Is(err, playwright.ErrTargetClosed) {
		tb.tabs.drop(tb)
		// Only a browser that went away is restarted: a tab closed under
		// its call (the setting turned off) leaves the others running.
		if b, ok := tb.browser.(interface{ IsConnected() bool }); !ok || !b.IsConnected() {
			tb.tabs.shots.forget(tb.browser)
		}
		go tb.shut()
		return true
	}
	return false
}

// cut shortens s to n runes, marking the cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
