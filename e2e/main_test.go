// Package e2e drives the product through a real Chromium.
//
// TestMain launches one browser for the whole package (starting Chromium
// costs about a second; a context costs milliseconds), and every test gets a
// fresh context from newPage, so no cookies or storage leak between tests.
//
// Browser tests skip, with the reason, where Chromium or the Playwright
// driver is not installed (or OUTBOUND_E2E_SKIP is set); the test command
// sets OUTBOUND_BROWSER_REQUIRED, so there a missing browser fails the
// package and CI cannot pass without one. See internal/browsertest.
package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/internal/browsertest"
	"github.com/outboundhq/outbound/tools/browser"
)

// sharedBrowser is the package's one Chromium; nil when browser tests skip,
// and then skipReason says why.
var (
	sharedBrowser *browser.Browser
	skipReason    string
)

func TestMain(m *testing.M) {
	code := runWithBrowser(m)
	removeConsoleBuild()
	os.Exit(code)
}

func runWithBrowser(m *testing.M) int {
	skip, err := browsertest.Check()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	if skip != "" {
		skipReason = skip
		fmt.Fprintf(os.Stderr, "e2e: %s\n", skip)
		return m.Run()
	}
	b, err := browser.Launch(browser.Options{
		// Tests never send a packet off the machine: test servers listen on
		// 127.0.0.1, and Chromium's own background requests die unresolved.
		ExtraArgs: []string{browser.BlockDNSArg("127.0.0.1", "localhost")},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n(to skip the browser tests on purpose, set %s=1)\n", err, browsertest.SkipEnv)
		return 1
	}
	sharedBrowser = b
	code := m.Run()
	if err := b.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Every page gets this viewport, so screenshots have a known size.
const (
	viewportWidth  = 1280
	viewportHeight = 720
)

// Timeouts in milliseconds. Generous because CI runs -race on 2 cores; a
// passing step returns as soon as its condition holds, so they cost nothing.
const (
	actionTimeoutMs    = 15_000
	assertionTimeoutMs = 10_000
)

// artifactsDir receives screenshots of failed tests (gitignored).
const artifactsDir = "artifacts"

// expect makes web-first assertions: each one retries until it holds or
// times out, so tests need no sleeps. Every call returns an error to check.
var expect = playwright.NewPlaywrightAssertions(assertionTimeoutMs)

// newPage opens a page in a fresh browser context whose relative URLs
// resolve against baseURL. When the test fails, the page's screenshot is
// saved under artifactsDir and its path logged. The context closes with the
// test.
func newPage(t *testing.T, baseURL string) playwright.Page {
	t.Helper()
	return newPageWith(t, baseURL, playwright.BrowserNewContextOptions{})
}

// unsafeFileChars are the characters of a test name not kept in a file name.
var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// saveFailureScreenshot writes what the page showed when the test failed.
// Its own errors are logged, not raised: the test has already failed.
func saveFailureScreenshot(t *testing.T, page playwright.Page) {
	path, err := filepath.Abs(filepath.Join(artifactsDir, unsafeFileChars.ReplaceAllString(t.Name(), "_")+".png"))
	if err != nil {
		t.Logf("e2e: no failure screenshot: %v", err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Logf("e2e: no failure screenshot: %v", err)
		return
	}
	if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path), FullPage: playwright.Bool(true)}); err != nil {
		t.Logf("e2e: no failure screenshot: %v", err)
		return
	}
	t.Logf("e2e: failure screenshot: %s", path)
}

// serveLoopback serves handler on 127.0.0.1 (never a public address) until
// the test ends, and returns its base URL.
func serveLoopback(t *testing.T, handler http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("e2e: listen on 127.0.0.1: %v", err)
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}
