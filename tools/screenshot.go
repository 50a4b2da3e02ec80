package tools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/tools/browser"
)

// ScreenshotInput is the input of take_screenshot.
type ScreenshotInput struct {
	URL      string `json:"url,omitempty" jsonschema:"The http or https URL of the page to photograph."`
	Tab      bool   `json:"tab,omitempty" jsonschema:"Photograph this conversation's open browser tab (browser_open) instead of a URL."`
	FullPage bool   `json:"full_page,omitempty" jsonschema:"Capture the whole page rather than the first screen; long pages are cut at the configured length."`
	Width    int    `json:"width,omitempty" jsonschema:"Viewport width in pixels (default 1280)."`
	Height   int    `json:"height,omitempty" jsonschema:"Viewport height in pixels (default 800)."`
}

// ShotResult is a screenshot, or a refusal.
type ShotResult struct {
	Refusal *guard.Refusal

	PNG           []byte
	URL           string // the final URL after redirects
	Title         string
	Width, Height int  // of the image
	Cut           bool // a full page longer than the limit was cut
	// Refused counts the page's own requests the policy refused (images,
	// frames, scripts): what is missing from the image, and why.
	Refused guard.CallRefusals
}

// OK reports whether the screenshot was taken.
func (r *ShotResult) OK() bool { return r.Refusal == nil }

// Caption is the one line that goes with the image.
func (r *ShotResult) Caption() string {
	if r.Refusal != nil {
		return RefusalAnswer(TakeScreenshotName, r.Refusal)
	}
	title := r.Title
	if title == "" {
		title = "(no title)"
	}
	line := fmt.Sprintf("Screenshot of %s, titled %q, %d×%d pixels.", r.URL, title, r.Width, r.Height)
	if r.Cut {
		line += " The page is longer; the image stops at the configured maximum length."
	}
	return line + refusedLine(r.Refused)
}

// refusedLine tells the agent how much of the page the policy kept out,
// once, however many requests that was.
func refusedLine(c guard.CallRefusals) string {
	if c.Count == 0 {
		return ""
	}
	hosts := len(c.Hosts) + c.MoreHosts
	shown := c.Hosts[:min(len(c.Hosts), refusedHostsShown)]
	list := strings.Join(shown, ", ")
	if rest := hosts - len(shown); rest > 0 {
		list += fmt.Sprintf(" and %d more", rest)
	}
	what := "requests"
	if c.Count == 1 {
		what = "request"
	}
	where := "hosts"
	if hosts == 1 {
		where = "host"
	}
	return fmt.Sprintf(" The policy refused %d of the page's %s, on %d %s (%s); what they would have shown is missing from the image.", c.Count, what, hosts, where, list)
}

// refusedHostsShown is how many refused hosts the caption names.
const refusedHostsShown = 5

// Default viewport when the agent names none.
const (
	defaultShotWidth  = 1280
	defaultShotHeight = 800
	// shotSlots bounds concurrent screenshots: one browser, a few tabs.
	shotSlots = 2
)

// ShotBrowser is the browser a Screenshotter drives. Launching is behind
// an interface so that a test can prove that a refused URL never starts
// or uses a browser.
type ShotBrowser interface {
	NewContext(opts ...playwright.BrowserNewContextOptions) (playwright.BrowserContext, error)
}

// Launcher starts the browser. It is called at most once while the
// browser stays up.
type Launcher func() (ShotBrowser, func() error, error)

// Screenshotter is the take_screenshot tool. The URL is decided before a
// browser is ever used; then one reused Chromium loads the page in a
// fresh context whose every request goes through the guard's proxy with
// a credential of its own, so each subresource is decided (and each
// refusal logged) as this call's.
type Screenshotter struct {
	guard    *guard.Guard
	proxy    *guard.EmbeddedProxy
	settings func() Settings
	launch   Launcher
	slots    chan struct{}

	mu      sync.Mutex
	browser ShotBrowser
	close   func() error

	// tabs, when the browser tools run on this browser too, lets
	// take_screenshot photograph a conversation's open tab.
	tabs *Tabs
}

// NewScreenshotter returns the tool. launch is usually ChromiumLauncher.
func NewScreenshotter(g *guard.Guard, proxy *guard.EmbeddedProxy, settings func() Settings, launch Launcher) *Screenshotter {
	return &Screenshotter{guard: g, proxy: proxy, settings: settings, launch: launch, slots: make(chan struct{}, shotSlots)}
}

// ChromiumLauncher launches Debian's Chromium for screenshots. The
// browser-level proxy refuses everything (refuse is such a proxy's URL):
// Chromium's own background requests go there and nowhere else, while
// each screenshot's context has the guard's proxy. Names are never
// resolved by Chromium itself, and WebRTC may not send UDP around the
// proxy.
func ChromiumLauncher(refuse string) Launcher {
	return func() (ShotBrowser, func() error, error) {
		b, err := browser.Launch(browser.Options{
			Proxy: &playwright.Proxy{Server: refuse},
			ExtraArgs: []string{
				browser.BlockDNSArg("127.0.0.1"),
				"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
				"--webrtc-ip-handling-policy=disable_non_proxied_udp",
				"--disable-features=WebRtcHideLocalIpsWithMdns",
				"--disable-extensions",
			},
		})
		if err != nil {
			return nil, nil, err
		}
		return b.Chromium, b.Close, nil
	}
}

// Close stops the browser, if it was started.
func (s *Screenshotter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.close == nil {
		return nil
	}
	err := s.close()
	s.browser, s.close = nil, nil
	return err
}

func (s *Screenshotter) ensureBrowser() (ShotBrowser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.browser != nil {
		return s.browser, nil
	}
	b, closeFn, err := s.launch()
	if err != nil {
		return nil, err
	}
	s.browser, s.close = b, closeFn
	return b, nil
}

// forget drops a browser that failed, so the next call starts a new one.
func (s *Screenshotter) forget(b ShotBrowser) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.browser == b && s.close != nil {
		_ = s.close()
		s.browser, s.close = nil, nil
	}
}

// Take photographs in.URL for turn.
func (s *Screenshotter) Take(ctx context.Context, turn Turn, in ScreenshotInput) ShotResult {
	if in.Tab {
		return s.tabs.Shot(ctx, turn, in)
	}
	set := s.settings()
	caller := turn.caller(TakeScreenshotName)
	ctx = guard.WithCaller(ctx, caller)
	w, h, bad := shotSize(in, set, s.guard.Wording())
	if bad != nil {
		return ShotResult{Refusal: bad}
	}
	dctx, cancel := context.WithTimeout(ctx, set.Guard.Timeout)
	d := s.guard.Decide(dctx, in.URL)
	cancel()
	if !d.Allowed {
		return ShotResult{Refusal: d.Refusal()}
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return ShotResult{Refusal: &guard.Refusal{Code: guard.CodeTimeout, Reason: guard.ReasonTimeout, Kind: guard.KindNetwork,
			Tool: TakeScreenshotName, Agent: turn.Agent, URL: in.URL,
			Message: "Other screenshots were still running when the request ended.", Fix: "Try again in a moment."}}
	}
	b, err := s.ensureBrowser()
	if err != nil {
		r := BrowserUnavailable(TakeScreenshotName, in.URL, err)
		r.Agent = turn.Agent
		return ShotResult{Refusal: r}
	}
	res, err := s.shoot(b, caller, &d, w, h, in.FullPage, set)
	if err != nil {
		if errors.Is(err, playwright.ErrTargetClosed) {
			s.forget(b)
		}
		r := BrowserFailed(TakeScreenshotName, in.URL, err)
		r.Agent = turn.Agent
		return ShotResult{Refusal: r}
	}
	return res
}

func (s *Screenshotter) shoot(b ShotBrowser, caller guard.Caller, d *guard.Decision, w, h int, full bool, set Settings) (ShotResult, error) {
	cred := s.proxy.Credential(caller)
	defer cred.Revoke()
	// Requests Chromium makes on its own for this context are refused as
	// the browser's, not decided as the agent's: the hosts the page asks
	// for are noted as Chromium reports them (the route below, before a
	// request leaves; the request and websocket events for the rest, such
	// as a redirect's next hop).
	hosts := newPageHosts()
	cred.Screen(guard.Caller{Tool: BrowserCaller}, hosts.screen)
	bctx, err := b.NewContext(playwright.BrowserNewContextOptions{
		Proxy:           &playwright.Proxy{Server: s.proxy.URL(), Username: &cred.Username, Password: &cred.Password},
		Viewport:        &playwright.Size{Width: w, Height: h},
		ServiceWorkers:  playwright.ServiceWorkerPolicyBlock,
		AcceptDownloads: playwright.Bool(false),
		UserAgent:       playwright.String(set.Guard.UserAgent),
	})
	if err != nil {
		return ShotResult{}, err
	}
	defer bctx.Close()
	// Only http and https leave the browser; file:, chrome:, view-source:,
	// data: and friends are refused before Chromium acts on them.
	if err := bctx.Route("**/*", func(r playwright.Route) {
		if !webScheme(r.Request().URL()) {
			_ = r.Abort("blockedbyclient")
			return
		}
		hosts.add(r.Request().URL())
		_ = r.Continue()
	}); err != nil {
		return ShotResult{}, err
	}
	bctx.OnRequest(func(r playwright.Request) { hosts.add(r.URL()) })
	page, err := bctx.NewPage()
	if err != nil {
		return ShotResult{}, err
	}
	page.OnWebSocket(func(ws playwright.WebSocket) { hosts.add(ws.URL()) })
	// The last URL the main frame tried to load: when the proxy refused
	// it (a redirect into the network, a host that is down), the refusal
	// the proxy recorded for it is the agent's answer.
	var mu sync.Mutex
	lastNav := d.URL.String()
	// Navigations that never reach the network, so no proxy sees them:
	// Chromium already refuses file:, chrome: and view-source: frames from
	// a web page; this is the second line, and it also refuses a main
	// frame that leaves http(s), e.g. for data:.
	var badNav string
	page.OnFrameNavigated(func(f playwright.Frame) {
		if u := f.URL(); localScheme(u) || (f == page.MainFrame() && !webScheme(u) && !harmlessScheme(u)) {
			mu.Lock()
			badNav = u
			mu.Unlock()
		}
	})
	page.OnRequest(func(r playwright.Request) {
		if r.IsNavigationRequest() && r.Frame() == page.MainFrame() {
			mu.Lock()
			lastNav = r.URL()
			mu.Unlock()
		}
	})
	timeout := float64(set.Guard.Timeout / time.Millisecond)
	resp, err := page.Goto(d.URL.String(), playwright.PageGotoOptions{Timeout: &timeout, WaitUntil: playwright.WaitUntilStateLoad})
	mu.Lock()
	nav, bad := lastNav, badNav
	mu.Unlock()
	if bad != "" {
		return ShotResult{Refusal: &guard.Refusal{Code: guard.CodeInvalid, Reason: guard.ReasonScheme, URL: firstLine(bad),
			Message: "The page navigated to a non-web address, which is refused.", Fix: "Ask for an http:// or https:// link instead."}}, nil
	}
	if r := navigationRefusal(cred, resp, err, nav, set, s.guard.Wording()); r != nil {
		return ShotResult{Refusal: r}, nil
	}
	final := page.URL()
	if !webScheme(final) {
		return ShotResult{Refusal: &guard.Refusal{Code: guard.CodeInvalid, Reason: guard.ReasonScheme, URL: final,
			Message: "The page navigated to a non-web address, which is refused.", Fix: "Ask for an http:// or https:// link instead."}}, nil
	}
	title, _ := page.Title()
	png, height, cut, err := capture(page, w, h, full, set)
	if err != nil {
		return ShotResult{}, err
	}
	return ShotResult{PNG: png, URL: final, Title: title, Width: w, Height: height, Cut: cut, Refused: cred.Refused()}, nil
}

// capture photographs a loaded page whose viewport is w×h: the first
// screen, or the whole page cut at the settings' maximum length.
func capture(page playwright.Page, w, h int, full bool, set Settings) (png []byte, height int, cut bool, err error) {
	timeout := float64(set.Guard.Timeout / time.Millisecond)
	opts := playwright.PageScreenshotOptions{Type: playwright.ScreenshotTypePng, Timeout: &timeout, FullPage: playwright.Bool(full)}
	height = h
	if full {
		ph, err := page.Evaluate(`() => Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)`)
		if err == nil {
			height = max(h, toInt(ph))
		}
		if height > set.ShotMaxPageHeight {
			height, cut = set.ShotMaxPageHeight, true
			opts.Clip = &playwright.Rect{X: 0, Y: 0, Width: float64(w), Height: float64(height)}
		}
	}
	png, err = page.Screenshot(opts)
	return png, height, cut, err
}

// navigationRefusal is the answer for a main-frame load the proxy refused
// or that failed: the very refusal the proxy recorded for this call's
// request of nav (http or the https tunnel), or, when the proxy refused
// nothing, the browser's own failure. It is never rebuilt from the
// proxy's headers or text.
func navigationRefusal(cred *guard.CallCredential, resp playwright.Response, err error, nav string, set Settings, words guard.Wording) *guard.Refusal {
	if r := cred.Refusal(nav); r != nil {
		return r
	}
	if err == nil && resp != nil && resp.Headers()["x-outbound-code"] == "" {
		return nil
	}
	if err == nil {
		// The proxy answered without deciding: the credential was refused
		// (the call ended) or the proxy is shutting down.
		return &guard.Refusal{Code: guard.CodeUnreachable, Reason: ReasonBrowser, Kind: guard.KindNetwork, Tool: TakeScreenshotName, URL: nav, Host: hostOf(nav),
			Message: fmt.Sprintf("The guard's proxy did not pass the page on (HTTP %d).", resp.Status()), Fix: "Try again; if it persists, an admin checks the console's log."}
	}
	if errors.Is(err, playwright.ErrTimeout) {
		return &guard.Refusal{Code: guard.CodeTimeout, Reason: guard.ReasonTimeout, Kind: guard.KindNetwork, Tool: TakeScreenshotName, URL: nav, Host: hostOf(nav),
			Message: fmt.Sprintf("The page did not finish loading within %s.", guard.FormatDuration(set.Guard.Timeout)), Fix: "Try again later, or raise " + words.SettingPhrase(guard.SettingTimeout) + ".",
			Remedy: guard.ChangeSetting(guard.SettingTimeout)}
	}
	return &guard.Refusal{Code: guard.CodeUnreachable, Reason: guard.ReasonConnect, Kind: guard.KindNetwork, Tool: TakeScreenshotName, URL: nav, Host: hostOf(nav),
		Message: "The page could not be loaded: " + firstLine(err.Error()) + ".", Fix: "Check that the site is up."}
}

func shotSize(in ScreenshotInput, set Settings, words guard.Wording) (int, int, *guard.Refusal) {
	w, h := in.Width, in.Height
	if w == 0 {
		w = min(defaultShotWidth, set.ShotMaxWidth)
	}
	if h == 0 {
		h = min(defaultShotHeight, set.ShotMaxHeight)
	}
	bad := func(what string, v, hi int, key string) *guard.Refusal {
		return &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonBadSize, Tool: TakeScreenshotName, URL: in.URL,
			Message: fmt.Sprintf("%s %d is outside %d–%d pixels.", what, v, shotMinSide, hi),
			Fix:     fmt.Sprintf("Pass a %s from %d to %d, or leave it out for 1280×800; an admin can raise %s.", what, shotMinSide, hi, words.SettingPhrase(key)),
			Remedy:  guard.ChangeSetting(key)}
	}
	if w < shotMinSide || w > set.ShotMaxWidth {
		return 0, 0, bad("width", w, set.ShotMaxWidth, settingShotMaxWidth)
	}
	if h < shotMinSide || h > set.ShotMaxHeight {
		return 0, 0, bad("height", h, set.ShotMaxHeight, settingShotMaxHeight)
	}
	return w, h, nil
}

// localScheme reports URLs that read the machine or the browser itself.
func localScheme(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "file", "chrome", "chrome-extension", "chrome-untrusted", "devtools", "view-source", "filesystem":
		return true
	}
	return false
}

// harmlessScheme is a main-frame URL that shows no content of its own:
// the blank page a tab starts with and Chromium's error page.
func harmlessScheme(raw string) bool {
	return raw == "about:blank" || strings.HasPrefix(raw, "chrome-error:")
}

func webScheme(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}
