package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/outboundhq/outbound/internal/browsertest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
)

// shotEnv is a guard with a recording reporter, its embedded proxy, and a
// Screenshotter whose launcher is counted.
type shotEnv struct {
	guard    *guard.Guard
	proxy    *guard.EmbeddedProxy
	shooter  *Screenshotter
	reg      *Registry
	launches atomic.Int32

	mu      sync.Mutex
	records []guard.Record
}

func newShotEnv(t *testing.T, launch Launcher, entries ...string) *shotEnv {
	t.Helper()
	e := &shotEnv{}
	var es []guard.Entry
	for _, text := range entries {
		en, err := guard.ParseEntry(text)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, en)
	}
	p, err := guard.NewPolicy(es, guard.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	e.guard = guard.New(guard.Options{Policy: p, Resolver: guardtest.NewResolver(), Recorder: guard.RecorderFunc(func(rec guard.Record) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.records = append(e.records, rec)
	})})
	t.Cleanup(e.guard.Close)
	e.proxy, err = e.guard.StartProxy(guard.EmbeddedProxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.proxy.Close() })
	counted := func() (ShotBrowser, func() error, error) {
		e.launches.Add(1)
		return launch()
	}
	e.shooter = NewScreenshotter(e.guard, e.proxy, DefaultSettings, counted)
	t.Cleanup(func() { e.shooter.Close() })
	e.reg = NewRegistry(e.guard)
	e.reg.Add(ScreenshotTool(e.shooter))
	return e
}

// Records returns every decision record, allowed or refused.
func (e *shotEnv) Records() []guard.Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]guard.Record(nil), e.records...)
}

// Reports returns the refused records: the refusal log's rows.
func (e *shotEnv) Reports() []guard.Record {
	var out []guard.Record
	for _, rec := range e.Records() {
		if !rec.Allowed() {
			out = append(out, rec)
		}
	}
	return out
}

// call calls take_screenshot through the registry, as MCP and the API do.
func (e *shotEnv) call(t *testing.T, turn Turn, args string) Result {
	t.Helper()
	res, err := e.reg.Call(context.Background(), Call{Tool: TakeScreenshotName, Turn: turn, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// realChromium returns the production launcher, or skips (fails under the
// test command) where the browser is not installed: see browsertest.
func realChromium(t testing.TB) Launcher {
	t.Helper()
	browsertest.Require(t)
	refuse, err := StartRefusingProxy()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { refuse.Close() })
	return ChromiumLauncher(refuse.URL())
}

func TestRefusedScreenshotNeverLaunchesABrowser(t *testing.T) {
	e := newShotEnv(t, func() (ShotBrowser, func() error, error) {
		t.Fatal("the browser was launched")
		return nil, nil, nil
	})
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "file:///etc/passwd", "http://localhost:9222/json", "http://10.0.0.1/"} {
		res := e.call(t, Turn{Agent: "a"}, fmt.Sprintf(`{"url": %q}`, u))
		if res.OK() || res.Refusal.Fix == "" || !strings.HasPrefix(res.Text, "take_screenshot was refused") {
			t.Fatalf("%s: %+v", u, res)
		}
	}
	if res := e.shooter.Take(context.Background(), Turn{}, ScreenshotInput{URL: "http://93.184.216.34/", Width: 99999}); res.OK() || res.Refusal.Reason != ReasonBadSize {
		t.Fatalf("oversized viewport: %+v", res.Refusal)
	}
	if n := e.launches.Load(); n != 0 {
		t.Fatalf("launched %d times", n)
	}
	if ev := e.Reports(); len(ev) != 4 || ev[0].Caller.Tool != TakeScreenshotName {
		t.Fatalf("refusals reported: %+v", ev)
	}
}

// TestScreenshotKeepsThePageInsideThePolicy: the page is allowed by a
// literal entry; everything it asks of a second, unlisted loopback server
// (an image, an iframe, a fetch, a redirect) is refused by the guard's
// proxy, which that server proves by counting zero hits.
func TestScreenshotKeepsThePageInsideThePolicy(t *testing.T) {
	launch := realChromium(t)
	var hits atomic.Int32
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "secret")
	}))
	defer secret.Close()
	var page *httptest.Server
	page = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, secret.URL+"/redirected", http.StatusFound)
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><html><head><title>Status page</title></head>
<body style="margin:0;background:#2458d3">
<h1 style="color:white">All systems operational</h1>
<img src="%[1]s/img.png" width="10" height="10">
<iframe src="%[1]s/frame"></iframe>
<img src="%[2]s/redirect" width="10" height="10">
<script>fetch(%[1]q + "/fetch").catch(() => {});</script>
</body></html>`, secret.URL, page.URL)
		}
	}))
	defer page.Close()
	e := newShotEnv(t, launch, strings.TrimPrefix(page.URL, "http://"))
	res := e.shooter.Take(context.Background(), Turn{Agent: "helpdesk", Thread: "T-7"}, ScreenshotInput{URL: page.URL + "/", Width: 800, Height: 600})
	if !res.OK() {
		t.Fatalf("screenshot refused: %+v", res.Refusal)
	}
	img, err := png.Decode(bytes.NewReader(res.PNG))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 600 {
		t.Fatalf("image is %v, want 800×600", b)
	}
	if r, g, b, _ := img.At(790, 590).RGBA(); r>>8 != 0x24 || g>>8 != 0x58 || b>>8 != 0xd3 {
		t.Fatalf("the page did not render: corner pixel is %02x%02x%02x", r>>8, g>>8, b>>8)
	}
	if res.Title != "Status page" || !strings.Contains(res.Caption(), `titled "Status page"`) {
		t.Fatalf("caption: %s", res.Caption())
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the unlisted server was reached %d times", n)
	}
	paths := map[string]bool{}
	for _, ev := range e.Reports() {
		if ev.Caller.Tool != TakeScreenshotName || ev.Caller.Agent != "helpdesk" || ev.Caller.Thread != "T-7" {
			t.Errorf("refusal not tied to the call: %+v", ev.Caller)
		}
		paths[ev.Refusal.URL[strings.LastIndex(ev.Refusal.URL, "/"):]] = true
	}
	for _, p := range []string{"/img.png", "/frame", "/fetch", "/redirected"} {
		if !paths[p] {
			t.Errorf("no refusal logged for %s; logged %v", p, paths)
		}
	}
	if e.launches.Load() != 1 {
		t.Fatalf("launches = %d", e.launches.Load())
	}
	// The browser is reused, with a fresh context, for the next call.
	if res := e.shooter.Take(context.Background(), Turn{}, ScreenshotInput{URL: page.URL + "/", FullPage: true}); !res.OK() {
		t.Fatalf("second screenshot: %+v", res.Refusal)
	}
	if e.launches.Load() != 1 {
		t.Fatalf("the browser was launched again: %d", e.launches.Load())
	}
}

func TestScreenshotOfARedirectIntoTheNetworkIsARefusal(t *testing.T) {
	launch := realChromium(t)
	var hits atomic.Int32
	// Another loopback address, so the target is not the allowed host on
	// another port but a different, unlisted internal host.
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err)
	}
	secret := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	secret.Listener = l
	secret.Start()
	defer secret.Close()
	page := httptest.NewServer(http.RedirectHandler(secret.URL+"/admin", http.StatusFound))
	defer page.Close()
	e := newShotEnv(t, launch, strings.TrimPrefix(page.URL, "http://"))
	res := e.shooter.Take(context.Background(), Turn{}, ScreenshotInput{URL: page.URL + "/go"})
	if res.OK() || res.Refusal.Code != guard.CodeForbidden || res.Refusal.Reason != guard.ReasonInternalAddress {
		t.Fatalf("got %+v, want a forbidden/internal_address refusal", res.Refusal)
	}
	if hits.Load() != 0 {
		t.Fatal("the redirect target was reached")
	}
}

func TestScreenshotOverMCPAndAPI(t *testing.T) {
	launch := realChromium(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Release notes</title><h1>4.2</h1>`)
	}))
	defer page.Close()
	e := newShotEnv(t, launch, strings.TrimPrefix(page.URL, "http://"))

	server := e.reg.MCPServer("test", "local")
	cs := connectMCP(t, server, nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(list.Tools) != 1 || list.Tools[0].Name != "take_screenshot" || !list.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("tools: %v %+v", err, list)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "take_screenshot", Arguments: map[string]any{"url": page.URL + "/", "width": 640, "height": 480}})
	if err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("call: %v %+v", err, res)
	}
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" {
		t.Fatalf("first content is %T", res.Content[0])
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(img.Data)); err != nil || cfg.Width != 640 || cfg.Height != 480 {
		t.Fatalf("image: %v %+v", err, cfg)
	}
	if text := res.Content[1].(*mcp.TextContent).Text; !strings.Contains(text, `titled "Release notes"`) || !strings.Contains(text, page.URL) {
		t.Fatalf("caption: %s", text)
	}

	api := httptest.NewServer(e.reg.ToolAPI(TakeScreenshotName, testAgents))
	defer api.Close()
	req, _ := http.NewRequest("POST", api.URL, strings.NewReader(`{"url":"http://169.254.169.254/latest/","thread":"T-1"}`))
	req.Header.Set("Authorization", "Bearer secret-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out ScreenshotResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || out.OK || out.Error.Reason != guard.ReasonMetadata {
		t.Fatalf("API refusal: %d %v %+v", resp.StatusCode, err, out)
	}
}

// TestLocalSchemesNeverReachTheScreenshot: frames and navigations to
// file:, chrome:, view-source: and data: do not show local content.
func TestLocalSchemesNeverReachTheScreenshot(t *testing.T) {
	launch := realChromium(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/frames":
			fmt.Fprintf(w, `<title>frames</title><h1>frames</h1><iframe src="file:///etc/hostname"></iframe><iframe src="view-source:http://%s/x"></iframe><iframe src="chrome://version"></iframe>`, r.Host)
		case "/to-data":
			fmt.Fprint(w, `<title>jump</title><script>location.href = "data:text/html,<h1>pwned</h1>"</script>`)
		case "/to-file":
			fmt.Fprint(w, `<title>jump</title><meta http-equiv="refresh" content="0;url=file:///etc/hostname">`)
		}
	}))
	defer page.Close()
	e := newShotEnv(t, launch, strings.TrimPrefix(page.URL, "http://"))
	res := e.shooter.Take(context.Background(), Turn{}, ScreenshotInput{URL: page.URL + "/frames"})
	if !res.OK() || res.Title != "frames" {
		t.Fatalf("a page whose local frames Chromium blocks still renders: %+v", res.Refusal)
	}
	for _, path := range []string{"/to-data", "/to-file"} {
		res := e.shooter.Take(context.Background(), Turn{}, ScreenshotInput{URL: page.URL + path})
		if res.OK() && !strings.HasPrefix(res.URL, page.URL) {
			t.Fatalf("%s: the screenshot shows %s", path, res.URL)
		}
		if !res.OK() && res.Refusal.Reason != guard.ReasonScheme {
			t.Fatalf("%s: refused for %s, want scheme", path, res.Refusal.Reason)
		}
	}
}
