package tools

import (
	"context"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// ReasonBrowserOwn is the screenshot's refusal of a request Chromium made
// on its own, not for the page. It is recorded under BrowserCaller, never
// charged to the agent.
const ReasonBrowserOwn guard.Reason = "browser_own"

// BrowserCaller is the Tool of the records of Chromium's own requests.
const BrowserCaller = "browser"

// pageHostsWait is how long the proxy waits, for a request to a host the
// page has not been seen to ask for, before refusing it as the browser's
// own: the browser's report of a redirect's next hop may arrive a moment
// after the request itself.
const pageHostsWait = 2 * time.Second

// pageHosts are the hosts (and ports) one screenshot's page asked for, as
// the browser reports its requests. It is the structural half of keeping
// Chromium's own traffic out of a page's proxy (the launch flags are the
// other): whatever the proxy sees for a host the page never named is not
// the page's. Hosts are the unit because that is all the proxy sees of
// an https request.
type pageHosts struct {
	mu      sync.Mutex
	known   map[string]bool
	changed chan struct{} // closed and replaced when a host is added
}

func newPageHosts() *pageHosts {
	return &pageHosts{known: map[string]bool{}, changed: make(chan struct{})}
}

// add notes the host of a URL the page asked for.
func (p *pageHosts) add(raw string) {
	key, ok := hostPortKey(raw)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known[key] {
		p.known[key] = true
		close(p.changed)
		p.changed = make(chan struct{})
	}
}

// await reports whether target's host is, or within wait becomes, one
// the page asked for.
func (p *pageHosts) await(ctx context.Context, target string, wait time.Duration) bool {
	key, ok := hostPortKey(target)
	if !ok {
		return false
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		p.mu.Lock()
		known, changed := p.known[key], p.changed
		p.mu.Unlock()
		if known {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// screen is the page's proxy screen: a request to a host the page never
// asked for is Chromium's own, refused.
func (p *pageHosts) screen(ctx context.Context, target string) *guard.Refusal {
	if p.await(ctx, target, pageHostsWait) {
		return nil
	}
	return &guard.Refusal{Code: guard.CodeForbidden, Reason: ReasonBrowserOwn, Kind: guard.KindPolicy, URL: target, Host: hostOf(target),
		Message: "The screenshot browser asked for this on its own (a background service), not for the page; the browser's own requests are refused and charged to no agent.",
		Fix:     "Nothing to change. If a page's own request was refused this way, report it: the page loads it in a way the screenshot tool does not see."}
}

// hostPortKey is a URL's lower-case host and port, the port implied by
// the scheme when absent.
func hostPortKey(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		default:
			return "", false
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}
