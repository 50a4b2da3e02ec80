package browser_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/internal/browsertest"
	"github.com/outboundhq/outbound/tools/browser"
)

// recordingProxy is an HTTP proxy that forwards nothing: it answers every
// plain request itself with a small page and records who asked for which
// host, and refuses every CONNECT tunnel (Chromium's own HTTPS background
// calls).
type recordingProxy struct {
	t        *testing.T
	mu       sync.Mutex
	requests []proxiedRequest
}

type proxiedRequest struct {
	host, userAgent string
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		http.Error(w, "tunnels refused", http.StatusForbidden)
		return
	}
	p.mu.Lock()
	p.requests = append(p.requests, proxiedRequest{host: r.URL.Host, userAgent: r.UserAgent()})
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if _, err := io.WriteString(w, `<!doctype html><title>proxied</title><h1>answered by the proxy</h1>`); err != nil {
		p.t.Errorf("proxy: write page: %v", err)
	}
}

func (p *recordingProxy) seen() []proxiedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// TestLaunchThroughProxy launches a real Chromium with a browser-level proxy
// and extra flags, opens a name that exists nowhere, and checks the proxy
// answered it with the user agent set by a flag. It proves Options.Proxy and
// Options.ExtraArgs reach Chromium, and that Close can be called twice.
func TestLaunchThroughProxy(t *testing.T) {
	browsertest.Require(t)
	const userAgent = "outbound-launch-test"
	proxy := &recordingProxy{t: t}
	srv := httptest.NewServer(proxy) // listens on 127.0.0.1
	defer srv.Close()

	b, err := browser.Launch(browser.Options{
		Proxy: &playwright.Proxy{Server: srv.URL},
		// Only the proxy's address resolves, so nothing can go direct.
		ExtraArgs: []string{browser.BlockDNSArg("127.0.0.1"), "--user-agent=" + userAgent},
	})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}()

	page, err := b.Chromium.NewPage()
	if err != nil {
		t.Fatalf("NewPage: %v", err)
	}
	const (
		target = "http://outbound-launch-test.invalid/page"
		host   = "outbound-launch-test.invalid"
	)
	if _, err := page.Goto(target); err != nil {
		t.Fatalf("open %s through the proxy: %v", target, err)
	}
	if err := playwright.NewPlaywrightAssertions().Locator(page.Locator("h1")).ToHaveText("answered by the proxy"); err != nil {
		t.Errorf("page heading: %v", err)
	}
	want := proxiedRequest{host: host, userAgent: userAgent}
	if seen := proxy.seen(); !slices.Contains(seen, want) {
		t.Errorf("proxy saw %+v, want %+v among them", seen, want)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if b.Chromium.IsConnected() {
		t.Error("Chromium still connected after Close")
	}
}
