package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"
)

// A report-only entry can only be seen at work on a host that is public:
// on loopback the guard's floor refuses first, so nothing is ever
// "would-refused". The test in this file therefore runs the console, a
// Chromium and a "public site" inside a private network namespace made for
// it (`unshare -n`: a network of its own loopback alone, so no packet can
// leave the machine), with a public-looking address put on lo, as the
// guard's netns tests do. The namespace also has its own PID namespace, so
// that every process the child starts (console, browser driver, Chromium)
// dies with it and none is left behind, however the child ends.

const reportOnlyChildEnv = "OUTBOUND_E2E_REPORT_ONLY_CHILD"

// Addresses the child puts on its lo. The public one must not be in a
// documentation or reserved range, which the guard's floor refuses.
const (
	nsPublicAddr  = "93.184.216.34"
	nsPrivateAddr = "10.20.30.40"
)

// reportOnlyChildTimeout bounds the whole child, browser and all.
const reportOnlyChildTimeout = 4 * time.Minute

func TestReportOnlyEntryInPrivateNetwork(t *testing.T) {
	if os.Getenv(reportOnlyChildEnv) != "" {
		t.Skip("running as the namespace child")
	}
	if sharedBrowser == nil {
		t.Skip(skipReason) // the child would launch its browser the same way
	}
	unshare, nsArgs := privateNamespaceArgs(t)
	ctx, cancel := context.WithTimeout(context.Background(), reportOnlyChildTimeout)
	defer cancel()
	args := append(nsArgs, os.Args[0], "-test.run=^TestReportOnlyNamespaceChild$", "-test.v", "-test.count=1",
		"-test.timeout="+(reportOnlyChildTimeout-10*time.Second).String())
	cmd := exec.CommandContext(ctx, unshare, args...)
	cmd.Env = append(os.Environ(), reportOnlyChildEnv+"=1")
	// Should this test process die, unshare dies with it; --kill-child then
	// kills the child, and with it its whole PID namespace.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("namespace child (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("namespace child failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestReportOnlyNamespaceChild") {
		t.Fatal("the namespace child did not run its checks")
	}
}

// privateNamespaceArgs returns unshare and the arguments that give a
// command its own network namespace, and its own PID (and mount, for its
// /proc) namespace where permitted: as root directly, otherwise inside a
// user namespace where the test is root. It skips the test, with the
// reason, where no network namespace is permitted or a tool is missing.
func privateNamespaceArgs(t *testing.T) (string, []string) {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the ip command (iproute2) is not installed")
	}
	withPIDs := []string{"--net", "--pid", "--fork", "--kill-child", "--mount-proc"}
	netOnly := []string{"--net", "--fork", "--kill-child"}
	asRoot := func(args []string) []string { return append([]string{"--map-root-user"}, args...) }
	var errs []string
	for _, args := range [][]string{withPIDs, asRoot(withPIDs), netOnly, asRoot(netOnly)} {
		out, err := exec.Command(unshare, append(args, "true")...).CombinedOutput()
		if err == nil {
			if !slices.Contains(args, "--pid") {
				t.Logf("no PID namespace here (%s): the child's processes end with its own cleanups only", strings.Join(errs, "; "))
			}
			return unshare, args
		}
		errs = append(errs, fmt.Sprintf("unshare %s: %v %s", strings.Join(args, " "), err, strings.TrimSpace(string(out))))
	}
	t.Skipf("a private network namespace is not permitted here: %s", strings.Join(errs, "; "))
	return "", nil
}

// TestReportOnlyNamespaceChild runs only inside the namespace made above:
// an admin keeps PUBLIC WEB, tries a narrowing entry report-only, sees
// what it would refuse (allowed, and logged so), and enforces it; the
// internal-address floor refuses throughout and is never "would-refused".
func TestReportOnlyNamespaceChild(t *testing.T) {
	if os.Getenv(reportOnlyChildEnv) != "1" {
		t.Skip("only runs inside TestReportOnlyEntryInPrivateNetwork")
	}
	requireOnlyLoopback(t)
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", nsPublicAddr + "/32", "dev", "lo"},
		{"addr", "add", nsPrivateAddr + "/32", "dev", "lo"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	// Port 80: the one every allowed host has open without a setting.
	site := serveCountingAt(t, nsPublicAddr+":80", htmlPage(`<title>Release notes</title><p>Version 4.2 fixes the login loop.</p>`))
	private := serveCountingAt(t, nsPrivateAddr+":80", htmlPage(`<title>Payroll</title>`))
	loopback := serveCountingAt(t, "127.0.0.1:80", htmlPage(`<title>Admin</title>`))
	page := func(n int) string { return fmt.Sprintf("http://%s/notes/%d", nsPublicAddr, n) }

	c, admin := adminConsole(t)
	bot := c.createToken("helpdesk-bot")
	triage := c.mcpSession(c.createToken("triage-bot"))

	// PUBLIC WEB: the public site is read.
	seeBadge(t, admin, "PUBLIC WEB")
	if a := c.fetchURL(bot, page(1)); !a.OK || a.Title != "Release notes" || site.Hits() != 1 {
		t.Fatalf("under PUBLIC WEB the public site was not read: %+v (site saw %d requests)", a, site.Hits())
	}

	// A narrowing entry, report-only: the card keeps PUBLIC WEB.
	mustGoto(t, admin, c.url+"/integrations")
	if err := admin.Locator(`[data-testid="allow-form"] input[name="report_only"]`).Check(); err != nil {
		t.Fatal(err)
	}
	submitAllowForm(t, admin, "docs.example.org", "only the docs, once we are sure")
	see(t, admin, `[data-testid="flash"]`, "report-only")
	seeBadge(t, admin, "PUBLIC WEB · 1 REPORT-ONLY")
	seeCount(t, admin, `[data-testid="allow-entry-report-only"]`, 1)

	// What it would refuse is still answered, over the API and MCP, and
	// the site gets both requests (new pages: a cached one is not fetched).
	if a := c.fetchURL(bot, page(2)); !a.OK || a.Title != "Release notes" {
		t.Fatalf("a report-only entry refused the public site over the API: %+v", a)
	}
	if res := triage.fetch(t, page(3)); res.IsError || !strings.Contains(mcpText(t, res), "Release notes") {
		t.Fatalf("a report-only entry refused the public site over MCP: %s", mcpText(t, res))
	}
	if n := site.Hits(); n != 3 {
		t.Fatalf("the public site saw %d requests, want 3: report-only must not stop them", n)
	}

	// The floor is never report-only: loopback and private addresses
	// are refused, unreached, and are refusals, not would-be refusals.
	floor := []string{"http://127.0.0.1/admin", "http://" + nsPrivateAddr + "/payroll"}
	for _, u := range floor {
		if a := c.fetchURL(bot, u); a.OK || a.Error == nil || a.Error.Reason != "internal_address" {
			t.Fatalf("fetch_url of %s with a report-only entry: %+v, want an internal_address refusal", u, a)
		}
	}
	if private.Hits() != 0 || loopback.Hits() != 0 {
		t.Fatalf("the floor let a request through (private %d, loopback %d)", private.Hits(), loopback.Hits())
	}

	// The decision log: would_refuse with the reason for the public
	// pages, refused (never would_refuse) for the floor.
	for _, want := range []struct{ url, agent string }{{page(2), "helpdesk-bot"}, {page(3), "triage-bot"}} {
		line := c.waitDecision(want.url)
		if line["decision"] != "would_refuse" || line["reason"] != "not_allowlisted" || line["agent"] != want.agent || line["tool"] != "fetch_url" {
			t.Fatalf("the decision of %s is logged as %v, want would_refuse not_allowlisted by %s's fetch_url", want.url, line, want.agent)
		}
	}
	for _, u := range floor {
		if line := c.waitDecision(u); line["decision"] != "refused" || line["reason"] != "internal_address" {
			t.Fatalf("the decision of %s is logged as %v, want refused internal_address", u, line)
		}
	}
	if line := c.waitDecision(page(1)); line["decision"] != "allowed" {
		t.Fatalf("the read before the report-only entry is logged as %v, want allowed", line)
	}

	// The card counts them; its link lists them, the floor's not among them.
	gotoUntilCount(t, admin, c.url+"/integrations",
		`[data-testid="would-refuse-summary"]:has-text("2 requests from 2 agents in the last 7 days would have been refused")`, 1)
	click(t, admin, `[data-testid="would-refuse-summary"] a`)
	see(t, admin, `[data-testid="would-refuse-page-summary"]`, "2 requests from 2 agents in the last 7 days would have been refused")
	wouldRow := `[data-testid="would-refuse-row"]`
	seeCount(t, admin, wouldRow, 2)
	for _, want := range []struct{ url, agent string }{{page(2), "helpdesk-bot"}, {page(3), "triage-bot"}} {
		row := admin.Locator(wouldRow, playwright.PageLocatorOptions{HasText: want.url})
		for _, text := range []string{want.agent, "fetch_url", "not_allowlisted"} {
			if err := expect.Locator(row).ToContainText(text); err != nil {
				t.Fatalf("the would-refuse row of %s should show %q: %v", want.url, text, err)
			}
		}
	}
	for _, u := range floor {
		seeCount(t, admin, wouldRow+`:has-text("`+u+`")`, 0)
	}
	// The refusal log holds the floor's two refusals and nothing of the site.
	refusalRow := `[data-testid="refusal-row"]`
	gotoUntilCount(t, admin, c.url+"/refusals", refusalRow, 2)
	seeCount(t, admin, refusalRow+`:has-text("`+nsPublicAddr+`")`, 0)

	// Enforce, with one click: the site is refused and gets nothing,
	// even for a page still in the cache.
	mustGoto(t, admin, c.url+"/integrations")
	click(t, admin, `[data-testid="allow-enforce"]`)
	see(t, admin, `[data-testid="flash"]`, "now reach only the listed hosts")
	seeBadge(t, admin, "1 ALLOWED")
	seeCount(t, admin, `[data-testid="allow-entry-report-only"]`, 0)
	hits := site.Hits()
	for _, u := range []string{page(2), page(4)} {
		if a := c.fetchURL(bot, u); a.OK || a.Error == nil || a.Error.Reason != "not_allowlisted" {
			t.Fatalf("after Enforce fetch_url of %s: %+v, want a not_allowlisted refusal", u, a)
		}
	}
	if res := triage.fetch(t, page(5)); !res.IsError || !strings.Contains(mcpText(t, res), "not_allowlisted") {
		t.Fatalf("after Enforce MCP's fetch_url of the site: %s", mcpText(t, res))
	}
	if n := site.Hits(); n != hits {
		t.Fatalf("after Enforce the public site saw %d more requests", n-hits)
	}
	for _, u := range []string{page(4), page(5)} {
		if line := c.waitDecision(u); line["decision"] != "refused" || line["reason"] != "not_allowlisted" {
			t.Fatalf("after Enforce the decision of %s is logged as %v, want refused not_allowlisted", u, line)
		}
	}
	gotoUntilCount(t, admin, c.url+"/refusals", refusalRow, 5)
	for _, u := range []string{page(2), page(4), page(5)} {
		row := admin.Locator(refusalRow, playwright.PageLocatorOptions{HasText: u})
		if err := expect.Locator(row).ToHaveCount(1); err != nil {
			t.Fatalf("the refusal log should hold one row for %s: %v", u, err)
		}
		if err := expect.Locator(row.Locator(`[data-testid="refusal-reason"]`)).ToHaveText("not_allowlisted"); err != nil {
			t.Fatalf("the refusal of %s: %v", u, err)
		}
	}
	// Enforced refusals are refusals: the would-refuse list did not grow.
	mustGoto(t, admin, c.url+"/refusals?outcome=would_refuse")
	seeCount(t, admin, wouldRow, 2)
}

// requireOnlyLoopback fails the test unless lo is its network's only
// interface, as in a namespace just made: then no packet can leave the
// machine, and adding addresses to lo changes nothing outside the test.
func requireOnlyLoopback(t *testing.T) {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifaces {
		if i.Name != "lo" {
			t.Fatalf("the network has interface %s besides lo: this is not a private namespace, and the test changes nothing here", i.Name)
		}
	}
}

// serveCountingAt serves handler on addr until the test ends, counting
// every request, like serveCounting on an address of the test's choosing.
func serveCountingAt(t *testing.T, addr string, handler http.Handler) *countingServer {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	s := &countingServer{URL: "http://" + addr}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		handler.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

// waitDecision returns the console's decision log line (one JSON object
// on its stderr) for url, waiting for it a while: the log is read from
// the process in the background. It fails the test when url has no line
// or more than one.
func (c *console) waitDecision(url string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := decisionLines(c.log(), url)
		if len(lines) > 1 {
			c.t.Fatalf("%d decision lines for %s, want one: %v", len(lines), url, lines)
		}
		if len(lines) == 1 {
			return lines[0]
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no decision line for %s in the console's log:\n%s", url, c.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// decisionLines are the JSON lines of log whose url is url.
func decisionLines(log, url string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(log, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["url"] == url && m["decision"] != nil {
			out = append(out, m)
		}
	}
	return out
}

// mcpAgent is an agent connected to the console's /mcp with its token.
type mcpAgent struct{ session *mcp.ClientSession }

// bearerTransport adds an agent's token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects to /mcp as the agent whose token is token, as an
// MCP client does, until the test ends.
func (c *console) mcpSession(token string) *mcpAgent {
	c.t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: c.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		c.t.Fatalf("connect to %s/mcp: %v", c.url, err)
	}
	c.t.Cleanup(func() { cs.Close() })
	return &mcpAgent{session: cs}
}

// fetch calls fetch_url over MCP.
func (a *mcpAgent) fetch(t *testing.T, url string) *mcp.CallToolResult {
	t.Helper()
	res, err := a.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_url", Arguments: map[string]any{"url": url}})
	if err != nil {
		t.Fatalf("MCP fetch_url %s: %v", url, err)
	}
	return res
}

// mcpText is the text of a tool result.
func mcpText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// String shows an answer with its error's fields, not a pointer, in
// failure messages.
func (a fetchAnswer) String() string {
	if a.Error == nil {
		return fmt.Sprintf("ok=%v status=%d title=%q", a.OK, a.Status, a.Title)
	}
	return fmt.Sprintf("ok=%v error={code=%s reason=%s fix=%q}", a.OK, a.Error.Code, a.Error.Reason, a.Error.Fix)
}
