package e2e

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// requestLog records every request a page's browser makes.
type requestLog struct {
	mu   sync.Mutex
	urls []string
}

func recordRequests(page playwright.Page) *requestLog {
	l := &requestLog{}
	page.Context().OnRequest(func(r playwright.Request) {
		l.mu.Lock()
		l.urls = append(l.urls, r.URL())
		l.mu.Unlock()
	})
	return l
}

// to lists the recorded requests to host:port.
func (l *requestLog) to(hostPort string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, u := range l.urls {
		if p, err := url.Parse(u); err == nil && p.Host == hostPort {
			out = append(out, u)
		}
	}
	return out
}

// previewedSite is a status page full of what a browser would fetch or
// follow: an image, a script, a stylesheet, a frame, a link. They point at
// a beacon server that is not on the allowlist, so only a person's browser
// could ever reach it: the console's own reads go through the guard.
func previewedSite(t *testing.T) (site, beacon *countingServer) {
	t.Helper()
	beacon = serveCounting(t, htmlPage("beacon"))
	b := beacon.URL
	site = serveCounting(t, htmlPage(`<!doctype html><html><head><title>Parcel Hub status</title>
<link rel="stylesheet" href="`+b+`/style.css"><script src="`+b+`/app.js"></script></head>
<body style="font-family: sans-serif; margin: 2rem"><main><h1>Parcel Hub: all systems operational</h1>
<p>Tracking, label printing and pickups have been running normally since 06:00 UTC. The delay reported on Monday was fixed.</p>
<p><img src="`+b+`/pixel.png" alt="pixel" width="1" height="1"> See the <a href="`+b+`/incidents">incident history</a> for earlier events.</p>
<iframe src="`+b+`/frame"></iframe>
<ul><li>Tracking API: operational</li><li>Label printing: operational</li><li>Pickups: operational</li></ul></main></body></html>`))
	return site, beacon
}

func TestPreviewNeverTouchesTheSiteFromThePersonsBrowser(t *testing.T) {
	c, ada := adminConsole(t)
	site, beacon := previewedSite(t)
	mustGoto(t, ada, c.url+"/integrations")
	addEntries(t, ada, hostPort(site.URL), "Parcel Hub status page")
	see(t, ada, `[data-testid="flash"]`, "Added 1 entry")

	sam := c.addSupportUser("sam")
	requests := recordRequests(sam)
	click(t, sam, `nav.rail a[href="/preview"]`)
	fill(t, sam, `#preview-url`, site.URL+"/status")
	fill(t, sam, `#preview-ticket`, "HD-4830")
	// The first screenshot starts the console's browser: allow for it.
	resp, err := sam.ExpectNavigation(func() error {
		return sam.Locator(`[data-testid="preview-form"] button[type="submit"]`).Click(playwright.LocatorClickOptions{Timeout: playwright.Float(90_000)})
	}, playwright.PageExpectNavigationOptions{Timeout: playwright.Float(90_000)})
	if err != nil {
		t.Fatalf("%v\n%s", err, c.log())
	}
	csp, _ := resp.HeaderValue("content-security-policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "img-src data:") {
		t.Fatalf("preview CSP = %q", csp)
	}
	see(t, sam, `[data-testid="preview-text"]`, "Parcel Hub: all systems operational")
	see(t, sam, `[data-testid="preview-ticket"]`, "HD-4830")
	// The screenshot, when the console's browser runs, is inlined.
	if n, _ := sam.Locator(`[data-testid="preview-shot"] img`).Count(); n == 1 {
		src, _ := sam.Locator(`[data-testid="preview-shot"] img`).GetAttribute("src")
		if !strings.HasPrefix(src, "data:image/png;base64,") {
			t.Fatalf("screenshot src = %.40q, want a data: URI", src)
		}
	} else {
		see(t, sam, `[data-testid="preview-no-shot"]`, "No screenshot")
	}
	if got := requests.to(hostPort(site.URL)); len(got) > 0 {
		t.Fatalf("the person's browser requested the previewed site: %v", got)
	}
	if got := requests.to(hostPort(beacon.URL)); len(got) > 0 || beacon.Hits() != 0 {
		t.Fatalf("the page's resources were requested: %v (%d beacon hits)", got, beacon.Hits())
	}
	if site.Hits() == 0 {
		t.Fatal("the site was never read: the preview did not go through the server")
	}
	// Nothing on the page leads to the site.
	links, err := sam.Locator(`a[href*="` + hostPort(site.URL) + `"], a[href*="` + hostPort(beacon.URL) + `"]`).Count()
	if err != nil || links != 0 {
		t.Fatalf("%d links to the site (%v)", links, err)
	}

	// A refused link shows the refusal and reads nothing.
	before := site.Hits()
	mustGoto(t, sam, c.url+"/preview")
	fill(t, sam, `#preview-url`, "http://169.254.169.254/latest/meta-data/")
	click(t, sam, `[data-testid="preview-form"] button[type="submit"]`)
	see(t, sam, `[data-testid="preview-reason"]`, "metadata")
	if site.Hits() != before {
		t.Fatal("a refused preview read the site")
	}

	// A public host refused by the allowlist offers Preview safely, which
	// fills the form; an internal address does not.
	bot := c.createToken("helpdesk-bot")
	var out fetchAnswer
	c.callTool(bot, "fetch_url", map[string]string{"url": "https://pastebin.com/raw/8sK2xQ"}, &out)
	c.callTool(bot, "fetch_url", map[string]string{"url": "http://10.0.0.12/admin"}, &out)
	gotoUntilCount(t, sam, c.url+"/refusals?agent=helpdesk-bot", `[data-testid="refusal-row"]`, 2)
	if err := sam.Locator(`[data-testid="refusal-row"]`, playwright.PageLocatorOptions{HasText: "10.0.0.12"}).Locator("td.refusal-time a").Click(); err != nil {
		t.Fatal(err)
	}
	see(t, sam, `[data-testid="detail-reason"]`, "internal_address")
	seeCount(t, sam, `[data-testid="preview-safely"]`, 0)
	sam.GoBack()
	if err := sam.Locator(`[data-testid="refusal-row"]`, playwright.PageLocatorOptions{HasText: "pastebin.com"}).Locator("td.refusal-time a").Click(); err != nil {
		t.Fatal(err)
	}
	click(t, sam, `[data-testid="preview-safely"]`)
	if err := expect.Locator(sam.Locator(`#preview-url`)).ToHaveValue("https://pastebin.com/raw/8sK2xQ"); err != nil {
		t.Fatal(err)
	}
}

func TestOverviewNumbersMatchTheLog(t *testing.T) {
	// The refusals and the bar that counts them must fall in one hour: a
	// run that began at 22:59:55 made them in the 22:00 bar and read the
	// 23:00 one (CI, at 23:00:02).
	clearOfHourEnd(t, 30*time.Second)
	c, ada := adminConsole(t)
	bot := c.createToken("helpdesk-bot")
	mustGoto(t, ada, c.url+"/integrations")
	addEntries(t, ada, "status.example.com", "")
	see(t, ada, `[data-testid="flash"]`, "Added 1 entry")
	var out fetchAnswer
	attack := []string{"http://169.254.169.254/latest/meta-data/", "http://10.0.0.12/admin", "http://127.0.0.1:6379/", "http://0x7f000001/",
		"http://192.168.1.1/", "http://localhost:8080/"}
	policy := []string{"ftp://files.example.com/a.pdf", "https://pastebin.com/raw/x", "https://tracking.example.net/T-1"}
	for _, u := range append(attack, policy...) {
		c.callTool(bot, "fetch_url", map[string]string{"url": u}, &out)
		if out.OK {
			t.Fatalf("%s was allowed", u)
		}
	}
	sam := c.addSupportUser("sam")
	want := strconv.Itoa(len(attack) + len(policy))
	// Refusals reach the log a moment after the calls.
	gotoUntilCount(t, sam, c.url+"/refusals", `[data-testid="refusal-row"]`, len(attack)+len(policy))
	mustGoto(t, sam, c.url+"/overview")
	see(t, sam, `[data-testid="total-attack"]`, strconv.Itoa(len(attack)))
	see(t, sam, `[data-testid="total-policy"]`, strconv.Itoa(len(policy)))
	seeCount(t, sam, `[data-testid="bar-hours"]`, 24)
	seeCount(t, sam, `[data-testid="spike-marker"]`, 1) // the hour; 6 is under the day floor
	see(t, sam, `[data-testid="top-agents"]`, "helpdesk-bot")
	// The current hour's bar opens the log for that hour: every refusal.
	bar := sam.Locator(`[data-testid="bar-hours"]`).Last()
	title, _ := bar.GetAttribute("aria-label")
	if !strings.Contains(title, want+" refused") {
		t.Fatalf("bar says %q, want %s refused", title, want)
	}
	if err := bar.Click(); err != nil {
		t.Fatal(err)
	}
	if err := expect.Page(sam).ToHaveURL(regexp.MustCompile(`/refusals\?from=`)); err != nil {
		t.Fatal(err)
	}
	seeCount(t, sam, `[data-testid="refusal-row"]`, len(attack)+len(policy))
	// The agent row opens the log for that agent.
	mustGoto(t, sam, c.url+"/overview")
	click(t, sam, `[data-testid="top-agents"] a`)
	seeCount(t, sam, `[data-testid="refusal-row"]`, len(attack)+len(policy))
}

// clearOfHourEnd waits for the next hour when less than margin of this
// one is left, so that what a test does and the hourly bar it reads fall
// in the same hour.
func clearOfHourEnd(t *testing.T, margin time.Duration) {
	t.Helper()
	now := time.Now()
	if left := now.Truncate(time.Hour).Add(time.Hour).Sub(now); left < margin {
		t.Logf("waiting %v for the next hour", left.Round(time.Millisecond))
		time.Sleep(left + 100*time.Millisecond)
	}
}
