package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Helpers shared by the console's feature tests: pages with their own
// context options, the allowlist form, the JSON API, and loopback
// servers that count their hits.

// newPageWith opens a page in a fresh browser context built from opts
// (its BaseURL is set to baseURL), with the same timeouts and failure
// screenshot as newPage. It exists for what newPage cannot vary: a
// browser without JavaScript, and the docs' viewport.
func newPageWith(t *testing.T, baseURL string, opts playwright.BrowserNewContextOptions) playwright.Page {
	t.Helper()
	if sharedBrowser == nil {
		t.Skip(skipReason)
	}
	opts.BaseURL = playwright.String(baseURL)
	if opts.Viewport == nil {
		opts.Viewport = &playwright.Size{Width: viewportWidth, Height: viewportHeight}
	}
	ctx, err := sharedBrowser.Chromium.NewContext(opts)
	if err != nil {
		t.Fatalf("e2e: new browser context for %s: %v", baseURL, err)
	}
	ctx.SetDefaultTimeout(actionTimeoutMs)
	ctx.SetDefaultNavigationTimeout(actionTimeoutMs)
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("e2e: close browser context: %v", err)
		}
	})
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatalf("e2e: new page for %s: %v", baseURL, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			saveFailureScreenshot(t, page)
		}
	})
	return page
}

// adminConsole starts a console and returns it with a page signed in as
// its first admin, "ada", created through the setup link.
func adminConsole(t *testing.T) (*console, playwright.Page) {
	t.Helper()
	c := startConsole(t)
	page := newPage(t, c.url)
	c.setupAdmin(page, "ada")
	return c, page
}

// addSupportUser creates a support user with the CLI, as an admin would
// on the server, and returns a page signed in as them.
func (c *console) addSupportUser(name string) playwright.Page {
	c.t.Helper()
	c.cli(adminPassword+"\n", "user", "add", "--role", "support", name)
	page := newPage(c.t, c.url)
	c.signIn(page, name, adminPassword)
	if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/overview$`)); err != nil {
		c.t.Fatalf("support user %s did not land on the Overview after sign-in: %v", name, err)
	}
	return page
}

// addEntries types entries (one per line) and a note into the allow form
// on /integrations and submits it. It does not check the outcome: callers
// assert the flash or the per-line errors they expect.
func addEntries(t *testing.T, page playwright.Page, entries, note string) {
	t.Helper()
	mustGoto(t, page, "/integrations")
	submitAllowForm(t, page, entries, note)
}

// submitAllowForm fills in and submits the allow form on the current page.
func submitAllowForm(t *testing.T, page playwright.Page, entries, note string) {
	t.Helper()
	fill(t, page, `[data-testid="allow-form"] textarea[name="entries"]`, entries)
	fill(t, page, `[data-testid="allow-form"] input[name="note"]`, note)
	click(t, page, `[data-testid="allow-form"] button[type="submit"]`)
}

// seeBadge asserts, web-first, the card's badge text exactly.
func seeBadge(t *testing.T, page playwright.Page, want string) {
	t.Helper()
	if err := expect.Locator(page.Locator(`[data-testid="egress-badge"]`)).ToHaveText(want); err != nil {
		t.Fatalf("the egress badge should read %q: %v", want, err)
	}
}

// seeCount asserts, web-first, that selector matches exactly n elements.
func seeCount(t *testing.T, page playwright.Page, selector string, n int) {
	t.Helper()
	if err := expect.Locator(page.Locator(selector)).ToHaveCount(n); err != nil {
		t.Fatalf("%s should match %d elements: %v", selector, n, err)
	}
}

// createToken creates an agent token with the CLI and returns it.
func (c *console) createToken(agent string) string {
	c.t.Helper()
	token := strings.TrimSpace(c.cli("", "token", "create", agent))
	if token == "" || strings.ContainsAny(token, " \n") {
		c.t.Fatalf("console token create %s printed %q, not one token", agent, token)
	}
	return token
}

// fetchAnswer is the part of POST /api/v1/tools/fetch_url's answer the
// tests read.
type fetchAnswer struct {
	OK    bool `json:"ok"`
	Error *struct {
		Code   string `json:"code"`
		Reason string `json:"reason"`
		Fix    string `json:"fix"`
	} `json:"error"`
	Status int    `json:"status"`
	Title  string `json:"title"`
	Text   string `json:"text"`
}

// callTool posts body to /api/v1/tools/<tool> with the agent's token, as
// an agent speaking plain HTTP does, and decodes the answer into out.
func (c *console) callTool(token, tool string, body any, out any) {
	c.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		c.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, c.url+"/api/v1/tools/"+tool, bytes.NewReader(raw))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("POST /api/v1/tools/%s: %v", tool, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("POST /api/v1/tools/%s: reading the answer: %v", tool, err)
	}
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("POST /api/v1/tools/%s answered %d: %s", tool, resp.StatusCode, got)
	}
	if err := json.Unmarshal(got, out); err != nil {
		c.t.Fatalf("POST /api/v1/tools/%s: the answer is not JSON: %v\n%s", tool, err, got)
	}
}

// fetchURL calls fetch_url through the JSON API.
func (c *console) fetchURL(token, url string) fetchAnswer {
	c.t.Helper()
	var out fetchAnswer
	c.callTool(token, "fetch_url", map[string]string{"url": url}, &out)
	return out
}

// countingServer serves handler on loopback and counts every request it
// gets, so a test can prove a refused request never reached it.
type countingServer struct {
	URL  string
	hits atomic.Int64
}

func serveCounting(t *testing.T, handler http.Handler) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.URL = serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		handler.ServeHTTP(w, r)
	}))
	return s
}

func (s *countingServer) Hits() int64 { return s.hits.Load() }

// htmlPage serves one fixed HTML document.
func htmlPage(doc string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, doc)
	})
}

// hostPort is the host:port of a test server's base URL.
func hostPort(baseURL string) string {
	return strings.TrimPrefix(baseURL, "http://")
}

// csrfField finds a form's CSRF token in a page's HTML.
var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// gotoUntilCount loads url until selector matches n elements. It is for
// what a page cannot update by itself: refusals are written to the log in
// the background a moment after the call they record, so the first load
// may come too early. Each load waits web-first for a short while.
func gotoUntilCount(t *testing.T, page playwright.Page, url, selector string, n int) {
	t.Helper()
	const attempts = 20
	var err error
	for range attempts {
		mustGoto(t, page, url)
		err = expect.Locator(page.Locator(selector)).ToHaveCount(n, playwright.LocatorAssertionsToHaveCountOptions{Timeout: playwright.Float(500)})
		if err == nil {
			return
		}
	}
	t.Fatalf("%s never showed %d of %s: %v", url, n, selector, err)
}

// holdAppJS holds back /static/app.js from page's next loads until the
// returned release is called (or the test ends): the page is then as a
// slow network leaves it, its HTML parsed and the script not yet run.
// Routing also turns the browser's cache off, so the script is fetched.
func holdAppJS(t *testing.T, page playwright.Page) (release func()) {
	t.Helper()
	held := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	if err := page.Route("**/static/app.js", func(r playwright.Route) {
		<-held
		_ = r.Continue()
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		release()
		_ = page.Unroute("**/static/app.js")
	})
	return release
}

// gotoParsed opens url without waiting for the page's load: with app.js
// held, the load never comes until it is released.
func gotoParsed(t *testing.T, page playwright.Page, url string) {
	t.Helper()
	if _, err := page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateCommit}); err != nil {
		t.Fatalf("goto %s: %v", url, err)
	}
}
