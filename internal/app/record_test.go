package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/internal/browsertest"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// sinkCounts are what the decision sink wrote: log lines, metric
// increments (by record) and refusal rows.
type sinkCounts struct {
	lines   []map[string]any
	metrics []guard.Record
	rows    []models.Refusal
}

// recordingSink is an App whose log, metrics and refusal rows are fakes,
// so a test sees every line, increment and row the one sink makes.
type recordingSink struct {
	*App
	mu      sync.Mutex
	logs    bytes.Buffer
	metrics []guard.Record
	rows    []models.Refusal
}

type lockedWriter struct{ s *recordingSink }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.logs.Write(p)
}

type fakeMetrics struct{ s *recordingSink }

func (m fakeMetrics) Record(rec guard.Record) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	m.s.metrics = append(m.s.metrics, rec)
}

type fakeRows struct{ s *recordingSink }

func (f fakeRows) Write(r models.Refusal) bool {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.s.rows = append(f.s.rows, r)
	return true
}

func (fakeRows) Close(context.Context) error { return nil }

func (fakeRows) Stats() models.RefusalWriterStats { return models.RefusalWriterStats{} }

func newRecordingSink() *recordingSink {
	s := &recordingSink{}
	s.App = &App{
		log:      slog.New(slog.NewJSONHandler(lockedWriter{s}, &slog.HandlerOptions{Level: slog.LevelInfo})),
		metrics:  fakeMetrics{s},
		refusals: fakeRows{s},
	}
	return s
}

func (s *recordingSink) counts(t *testing.T) sinkCounts {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var c sinkCounts
	sc := bufio.NewScanner(bytes.NewReader(s.logs.Bytes()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("a log line is not JSON: %q", sc.Text())
		}
		c.lines = append(c.lines, line)
	}
	c.metrics = append(c.metrics, s.metrics...)
	c.rows = append(c.rows, s.rows...)
	return c
}

// recordEnv is the product's tools and proxy over one guard whose records
// go to a recordingSink, with loopback servers behind public test
// addresses and a resolver that knows only what the test says.
type recordEnv struct {
	sink     *recordingSink
	guard    *guard.Guard
	resolver *guardtest.Resolver
	dialer   *guardtest.Dialer
	reg      *tools.Registry
	x        *tools.Integrations
	settings tools.Settings
	proxy    *httptest.Server
	token    string
	// failLaunch makes the screenshot browser fail to start.
	failLaunch atomic.Bool
}

const (
	siteIP = "93.184.216.10"
	downIP = "93.184.216.20"
)

func newRecordEnv(t *testing.T) *recordEnv {
	t.Helper()
	e := &recordEnv{sink: newRecordingSink(), resolver: guardtest.NewResolver(), dialer: guardtest.NewDialer(), token: "agent-token"}
	e.settings = tools.DefaultSettings()
	e.settings.Guard.Timeout = guard.MinTimeout
	e.settings.Guard.MaxBytes = guard.MinMaxBytes
	e.settings.Guard.Redirects = 1
	e.settings.ReadsPerTurn = 1
	e.guard = guard.New(guard.Options{Resolver: e.resolver, Dial: e.dialer.Dial, Recorder: guard.RecorderFunc(e.sink.record)})
	t.Cleanup(e.guard.Close)
	e.setPolicy(t)

	e.resolver.Answer("site.example.com", siteIP)
	e.resolver.Answer("other.example.com", siteIP)
	e.resolver.Answer("down.example.com", downIP)
	site := httptest.NewServer(http.HandlerFunc(e.site))
	t.Cleanup(site.Close)
	e.dialer.Route(siteIP+":80", site.Listener.Addr().String())
	// A tunnel's far end: what it speaks is not the proxy's business.
	e.dialer.Route(siteIP+":443", site.Listener.Addr().String())
	e.dialer.Route(downIP+":80", "127.0.0.1:1") // nothing listens on port 1

	e.x = tools.NewIntegrations(e.guard, e.Settings)
	shotProxy, err := e.guard.StartProxy(guard.EmbeddedProxyOptions{Caller: guard.Caller{Tool: tools.TakeScreenshotName}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shotProxy.Close() })
	refuse, err := tools.StartRefusingProxy()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { refuse.Close() })
	chromium := tools.ChromiumLauncher(refuse.URL())
	shots := tools.NewScreenshotter(e.guard, shotProxy, e.Settings, func() (tools.ShotBrowser, func() error, error) {
		if e.failLaunch.Load() {
			return nil, nil, errors.New("chromium: executable not found")
		}
		return chromium()
	})
	t.Cleanup(func() { shots.Close() })
	e.reg = tools.Builtin(tools.Deps{Guard: e.guard, Settings: e.Settings, Shots: shots, Integrations: e.x})

	proxy, err := e.guard.NewProxy(guard.ProxyOptions{Authenticate: func(_ context.Context, _, pass string) (guard.Caller, error) {
		if pass != e.token {
			return guard.Caller{}, guard.ErrProxyCredential
		}
		return guard.Caller{Tool: "proxy", Agent: "bot"}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.proxy = httptest.NewServer(proxy)
	t.Cleanup(e.proxy.Close)
	return e
}

func (e *recordEnv) Settings() tools.Settings { return e.settings }

// setPolicy sets the allowlist (none: the public web).
func (e *recordEnv) setPolicy(t *testing.T, entries ...string) {
	t.Helper()
	var es []guard.Entry
	for _, text := range entries {
		en, err := guard.ParseEntry(text)
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, en)
	}
	p, err := guard.NewPolicy(es, e.settings.Guard)
	if err != nil {
		t.Fatal(err)
	}
	e.guard.SetPolicy(p)
}

// site is every page the cases read, behind site.example.com.
func (e *recordEnv) site(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/page":
		fmt.Fprint(w, "<title>Page</title><p>Some text.</p>")
	case "/pdf":
		w.Header().Set("Content-Type", "application/pdf")
		fmt.Fprint(w, "%PDF-1.7")
	case "/declared":
		w.Header().Set("Content-Length", "4096")
		w.Write(bytes.Repeat([]byte("x"), 4096))
	case "/streamed":
		for i := 0; i < 8; i++ {
			w.Write(bytes.Repeat([]byte("<p>streamed</p>"), 40))
			w.(http.Flusher).Flush()
		}
	case "/slow":
		<-r.Context().Done()
	case "/loop":
		http.Redirect(w, r, "/loop2", http.StatusFound)
	case "/loop2":
		http.Redirect(w, r, "/loop3", http.StatusFound)
	case "/no-location":
		w.WriteHeader(http.StatusFound)
	case "/307":
		http.Redirect(w, r, "http://other.example.com/page", http.StatusTemporaryRedirect)
	case "/to-blob":
		// A page may send its own frame to a URL no proxy sees; the tool
		// refuses what leaves http(s).
		fmt.Fprint(w, `<title>jump</title><script>location.href = URL.createObjectURL(new Blob(["<h1>x</h1>"], {type: "text/html"}))</script>`)
	case "/to-internal":
		http.Redirect(w, r, "http://10.0.0.1/", http.StatusFound)
	case "/never-loads":
		// The page's image keeps trickling, so the load event never comes
		// and the proxy, which sees bytes moving, never times it out.
		if strings.HasSuffix(r.URL.RawQuery, "img") {
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(200 * time.Millisecond):
					w.Write([]byte("x"))
					w.(http.Flusher).Flush()
				}
			}
		}
		fmt.Fprint(w, `<title>slow</title><img src="/never-loads?img">`)
	}
}

// call calls a registry tool as MCP, the API and the CLI do.
func (e *recordEnv) call(t *testing.T, tool, thread, args string) tools.Result {
	t.Helper()
	res, err := e.reg.Call(context.Background(), tools.Call{Tool: tool, Turn: tools.Turn{Agent: "bot", Thread: thread}, Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// probe makes the one integration "probe" call method url.
func (e *recordEnv) probe(method, url string, params ...tools.IntegrationParam) {
	in := tools.Integration{Name: "probe", Description: "A probe.", Method: method, URL: url, Params: params}
	if method == "POST" {
		in.Body = `{"note": "hello"}`
	}
	e.x.Set([]tools.Integration{in})
}

// viaProxy sends a raw request line through the standalone proxy, so any
// target, however malformed, reaches it as a client would send it.
func (e *recordEnv) viaProxy(t *testing.T, method, target, pass string) int {
	t.Helper()
	conn, err := net.Dial("tcp", e.proxy.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	host := strings.TrimPrefix(strings.TrimPrefix(target, "http://"), "https://")
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	auth := base64.StdEncoding.EncodeToString([]byte("agent:" + pass))
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\nConnection: close\r\n\r\n", method, target, host, auth)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s through the proxy: %v", method, target, err)
	}
	if method != http.MethodConnect || resp.StatusCode >= 300 {
		// An open tunnel's "body" is the tunnel: closing it is the end.
		io.Copy(io.Discard, resp.Body)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// throughTunnel opens a tunnel to hostPort, sends first through it and
// reads until the proxy closes it.
func (e *recordEnv) throughTunnel(t *testing.T, hostPort, first string) {
	t.Helper()
	conn, err := net.Dial("tcp", e.proxy.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	auth := base64.StdEncoding.EncodeToString([]byte("agent:" + e.token))
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", hostPort, hostPort, auth)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %v %v", hostPort, resp, err)
	}
	io.WriteString(conn, first)
	if n, _ := io.Copy(io.Discard, br); n != 0 {
		t.Fatalf("the tunnel answered %d bytes", n)
	}
}

// urlCases are the refusals a URL earns on its own; each is driven
// through every tool and the proxy.
var urlCases = []struct {
	reason guard.Reason
	url    string
	allow  []string // the allowlist; none is the public web
	kind   guard.Kind
}{
	{guard.ReasonBadURL, "http://exa mple.com/", nil, guard.KindPolicy},
	{guard.ReasonScheme, "ftp://site.example.com/", nil, guard.KindPolicy},
	{guard.ReasonCredentials, "http://u:p@site.example.com/", nil, guard.KindPolicy},
	{guard.ReasonEmptyHost, "http:///page", nil, guard.KindPolicy},
	{guard.ReasonBadHost, "http://exa_mple!.com/", nil, guard.KindPolicy},
	{guard.ReasonNumericHost, "http://0x7f000001/", nil, guard.KindPolicy},
	{guard.ReasonZone, "http://[fe80::1%25eth0]/", nil, guard.KindPolicy},
	{guard.ReasonBadPort, "http://site.example.com:99999/", nil, guard.KindPolicy},
	{guard.ReasonPort, "http://site.example.com:8080/", nil, guard.KindPolicy},
	{guard.ReasonNotAllowlisted, "http://site.example.com/page", []string{"docs.example.com"}, guard.KindPolicy},
	{guard.ReasonInternalName, "http://localhost/", nil, guard.KindPolicy},
	{guard.ReasonMetadata, "http://169.254.169.254/latest/", nil, guard.KindPolicy},
	{guard.ReasonInternalAddress, "http://10.0.0.1/", nil, guard.KindPolicy},
	{guard.ReasonDNS, "http://nowhere.example.com/", nil, guard.KindNetwork},
}

// refusalCase is one refusal of one tool (or of the proxy).
type refusalCase struct {
	name    string
	tool    string // the record's tool
	reason  guard.Reason
	kind    guard.Kind
	browser bool // needs Chromium
	// proxied is, for a browser case, the reason the proxy refused the
	// page's own request (its one proxied refusal); "" when the proxy let
	// the page's requests through and only the call was refused.
	proxied guard.Reason
	allow   []string
	setup   func(t *testing.T, e *recordEnv)
	act     func(t *testing.T, e *recordEnv) *guard.Refusal // nil when only the record knows the refusal (the proxy)
}

func fetchCase(reason guard.Reason, kind guard.Kind, args string) refusalCase {
	return refusalCase{name: "fetch_url/" + string(reason), tool: tools.FetchURLName, reason: reason, kind: kind,
		act: func(t *testing.T, e *recordEnv) *guard.Refusal {
			return e.call(t, tools.FetchURLName, "T-"+string(reason), args).Refusal
		}}
}

func integrationCase(reason guard.Reason, kind guard.Kind, method, url, args string, params ...tools.IntegrationParam) refusalCase {
	return refusalCase{name: "call_integration/" + string(reason), tool: tools.CallIntegrationName, reason: reason, kind: kind,
		setup: func(t *testing.T, e *recordEnv) { e.probe(method, url, params...) },
		act: func(t *testing.T, e *recordEnv) *guard.Refusal {
			return e.call(t, tools.CallIntegrationName, "T-"+string(reason), args).Refusal
		}}
}

// probeCase is integrationCase through the integration's own tool,
// probe, which records its calls as call_integration.
func probeCase(reason guard.Reason, kind guard.Kind, method, url, args string, params ...tools.IntegrationParam) refusalCase {
	return refusalCase{name: "probe/" + string(reason), tool: tools.CallIntegrationName, reason: reason, kind: kind,
		setup: func(t *testing.T, e *recordEnv) { e.probe(method, url, params...) },
		act: func(t *testing.T, e *recordEnv) *guard.Refusal {
			return e.call(t, "probe", "T-probe-"+string(reason), args).Refusal
		}}
}

func shotCase(reason guard.Reason, kind guard.Kind, browser bool, args string) refusalCase {
	return refusalCase{name: "take_screenshot/" + string(reason), tool: tools.TakeScreenshotName, reason: reason, kind: kind, browser: browser,
		act: func(t *testing.T, e *recordEnv) *guard.Refusal {
			return e.call(t, tools.TakeScreenshotName, "T-"+string(reason), args).Refusal
		}}
}

func proxyCase(reason guard.Reason, kind guard.Kind, method, target, pass string) refusalCase {
	return refusalCase{name: "proxy/" + string(reason), tool: "proxy", reason: reason, kind: kind,
		act: func(t *testing.T, e *recordEnv) *guard.Refusal {
			if status := e.viaProxy(t, method, target, pass); status < 400 {
				t.Fatalf("the proxy answered %d", status)
			}
			return nil
		}}
}

func refusalCases() []refusalCase {
	var cases []refusalCase
	for _, u := range urlCases {
		q := fmt.Sprintf(`{"url": %q}`, u.url)
		for _, c := range []refusalCase{
			fetchCase(u.reason, u.kind, q),
			integrationCase(u.reason, u.kind, "GET", u.url, `{"name": "probe"}`),
			probeCase(u.reason, u.kind, "GET", u.url, `{}`),
			shotCase(u.reason, u.kind, false, q),
		} {
			c.allow = u.allow
			cases = append(cases, c)
		}
		if _, never := notThroughATool["proxy"][u.reason]; !never {
			c := proxyCase(u.reason, u.kind, "GET", u.url, "agent-token")
			c.allow = u.allow
			cases = append(cases, c)
		}
	}
	site := "http://site.example.com"
	down := "http://down.example.com/"
	cases = append(cases,
		fetchCase(guard.ReasonConnect, guard.KindNetwork, `{"url": "`+down+`"}`),
		fetchCase(guard.ReasonRedirects, guard.KindPolicy, `{"url": "`+site+`/loop"}`),
		fetchCase(guard.ReasonBadRedirect, guard.KindPolicy, `{"url": "`+site+`/no-location"}`),
		fetchCase(guard.ReasonTimeout, guard.KindNetwork, `{"url": "`+site+`/slow"}`),
		fetchCase(guard.ReasonDeclaredSize, guard.KindPolicy, `{"url": "`+site+`/declared"}`),
		fetchCase(guard.ReasonStreamedSize, guard.KindPolicy, `{"url": "`+site+`/streamed"}`),
		fetchCase(tools.ReasonContentType, guard.KindPolicy, `{"url": "`+site+`/pdf"}`),
		fetchCase(tools.ReasonBadStart, guard.KindPolicy, `{"url": "`+site+`/page", "start": 99999}`),
		fetchCase(tools.ReasonBadParams, guard.KindPolicy, `{"url": "`+site+`/page", "start": -1}`),
		refusalCase{name: "fetch_url/reads_per_turn", tool: tools.FetchURLName, reason: tools.ReasonReadsPerTurn, kind: guard.KindPolicy,
			setup: func(t *testing.T, e *recordEnv) {
				e.call(t, tools.FetchURLName, "T-budget", `{"url": "`+site+`/page?1"}`)
			},
			act: func(t *testing.T, e *recordEnv) *guard.Refusal {
				return e.call(t, tools.FetchURLName, "T-budget", `{"url": "`+site+`/page?2"}`).Refusal
			}},

		integrationCase(guard.ReasonConnect, guard.KindNetwork, "GET", down, `{"name": "probe"}`),
		integrationCase(guard.ReasonRedirects, guard.KindPolicy, "GET", site+"/loop", `{"name": "probe"}`),
		integrationCase(guard.ReasonBadRedirect, guard.KindPolicy, "GET", site+"/no-location", `{"name": "probe"}`),
		integrationCase(guard.ReasonTimeout, guard.KindNetwork, "GET", site+"/slow", `{"name": "probe"}`),
		integrationCase(guard.ReasonDeclaredSize, guard.KindPolicy, "GET", site+"/declared", `{"name": "probe"}`),
		integrationCase(guard.ReasonStreamedSize, guard.KindPolicy, "GET", site+"/streamed", `{"name": "probe"}`),
		integrationCase(guard.ReasonCrossOriginBody, guard.KindPolicy, "POST", site+"/307", `{"name": "probe"}`),
		integrationCase(tools.ReasonUnknownIntegration, guard.KindPolicy, "GET", site+"/page", `{"name": "no_such_integration"}`),
		integrationCase(tools.ReasonBadParams, guard.KindPolicy, "GET", site+"/page?id={id}", `{"name": "probe", "params": {}}`,
			tools.IntegrationParam{Name: "id", Type: tools.ParamString, Required: true}),

		probeCase(guard.ReasonConnect, guard.KindNetwork, "GET", down, `{}`),
		probeCase(guard.ReasonRedirects, guard.KindPolicy, "GET", site+"/loop", `{}`),
		probeCase(guard.ReasonBadRedirect, guard.KindPolicy, "GET", site+"/no-location", `{}`),
		probeCase(guard.ReasonTimeout, guard.KindNetwork, "GET", site+"/slow", `{}`),
		probeCase(guard.ReasonDeclaredSize, guard.KindPolicy, "GET", site+"/declared", `{}`),
		probeCase(guard.ReasonStreamedSize, guard.KindPolicy, "GET", site+"/streamed", `{}`),
		probeCase(guard.ReasonCrossOriginBody, guard.KindPolicy, "POST", site+"/307", `{}`),
		probeCase(tools.ReasonBadParams, guard.KindPolicy, "GET", site+"/page?id={id}", `{}`,
			tools.IntegrationParam{Name: "id", Type: tools.ParamString, Required: true}),
		named(probeCase(tools.ReasonBadParams, guard.KindPolicy, "GET", site+"/page?id={id}", `{"id": 7}`,
			tools.IntegrationParam{Name: "id", Type: tools.ParamString, Required: true}), " (a mistyped parameter)"),

		shotCase(tools.ReasonBadSize, guard.KindPolicy, false, `{"url": "`+site+`/page", "width": 3000}`),
		shotCase(tools.ReasonBadParams, guard.KindPolicy, false, `{"url": "`+site+`/page", "width": 99999}`),
		refusalCase{name: "take_screenshot/browser", tool: tools.TakeScreenshotName, reason: tools.ReasonBrowser, kind: guard.KindNetwork,
			setup: func(t *testing.T, e *recordEnv) { e.failLaunch.Store(true) },
			act: func(t *testing.T, e *recordEnv) *guard.Refusal {
				defer e.failLaunch.Store(false)
				return e.call(t, tools.TakeScreenshotName, "T-browser", `{"url": "`+site+`/page"}`).Refusal
			}},
		named(shotCase(guard.ReasonScheme, guard.KindPolicy, true, `{"url": "`+site+`/to-blob"}`), " (a navigation)"),
		shotCase(guard.ReasonTimeout, guard.KindNetwork, true, `{"url": "`+site+`/never-loads"}`),
		proxiedToo(shotCase(guard.ReasonConnect, guard.KindNetwork, true, `{"url": "`+down+`"}`), guard.ReasonConnect),

		proxyCase(guard.ReasonProxyAuth, guard.KindPolicy, "GET", site+"/page", "wrong-token"),
		proxyCase(guard.ReasonConnect, guard.KindNetwork, "GET", down, "agent-token"),
		proxyCase(guard.ReasonTimeout, guard.KindNetwork, "GET", site+"/slow", "agent-token"),
		proxyCase(guard.ReasonBadHost, guard.KindPolicy, "CONNECT", "no-port-here", "agent-token"),
		named(proxyCase(guard.ReasonInternalAddress, guard.KindPolicy, "CONNECT", "10.0.0.1:443", "agent-token"), " (CONNECT)"),
		allowing(named(proxyCase(guard.ReasonNotAllowlisted, guard.KindPolicy, "CONNECT", "site.example.com:443", "agent-token"), " (CONNECT)"), "docs.example.com"),
		refusalCase{name: "proxy/tunnel_name", tool: "proxy", reason: guard.ReasonTunnelName, kind: guard.KindPolicy,
			act: func(t *testing.T, e *recordEnv) *guard.Refusal {
				e.throughTunnel(t, "site.example.com:443", "GET / HTTP/1.1\r\nHost: other.example.com\r\n\r\n")
				return nil
			}},
	)
	// A redirect a browser follows to an internal address: the proxy
	// refuses the hop (its own record) and the call is refused for it.
	cases = append(cases, proxiedToo(named(shotCase(guard.ReasonInternalAddress, guard.KindPolicy, true, `{"url": "`+site+`/to-internal"}`), " (after a redirect)"), guard.ReasonInternalAddress))
	return cases
}

// isFavicon reports whether url is the icon Chromium may ask for after
// showing a page, an error page included: a proxied request of its own,
// with its own record, but not the page's.
func isFavicon(url string) bool { return strings.HasSuffix(url, "/favicon.ico") }

func named(c refusalCase, suffix string) refusalCase {
	c.name += suffix
	return c
}

func allowing(c refusalCase, entries ...string) refusalCase {
	c.allow = entries
	return c
}

// proxiedToo says the proxy refused the page's own request for reason:
// the browser case is then one proxied refusal and one refused call.
func proxiedToo(c refusalCase, reason guard.Reason) refusalCase {
	c.proxied = reason
	return c
}

// notThroughATool lists, per tool, the reasons it cannot give, and why.
var notThroughATool = map[string]map[guard.Reason]string{
	"*": {
		// The browser tools and confirmation have their own end-to-end
		// tests with a real Chromium and a scripted agent (tools'
		// TestBrowserHiddenOrders, TestBrowserRefsAndTabs,
		// TestBrowserSubmitNeedsConfirmation, and the confirm tests);
		// this test drives fetch_url, take_screenshot, integrations and
		// the proxy.
		tools.ReasonOtherSite:            "a browser tool's navigation (tools' TestBrowserHiddenOrders)",
		tools.ReasonStaleRef:             "a browser tool's input (tools' TestBrowserRefsAndTabs)",
		tools.ReasonNoTab:                "a browser tool before browser_open (tools' TestBrowserRefsAndTabs)",
		tools.ReasonTabsFull:             "the browser tools' tab limit (tools' TestBrowserRefsAndTabs)",
		tools.ReasonUnconfirmed:          "a write request a page sends by itself, with no click or typing of the agent behind it (tools/browser_tab.go mayWrite)",
		tools.ReasonBrowserOff:           "the browser setting (tools' TestBrowserToolsFollowTheSetting)",
		tools.ReasonNotAField:            "browser_type's target (tools' TestBrowserRefsAndTabs)",
		tools.ReasonReadOnly:             "a side effect under browser = read_only (tools' confirm tests)",
		tools.ReasonNeedsConfirmation:    "a side effect in a conversation that read the web (tools' confirm tests)",
		tools.ReasonConfirmationDeclined: "a person's answer (tools' confirm tests)",
		tools.ReasonUnrecorded:           "a database that cannot record a web read, which this environment's registry has none of (TestWebReadsFailClosedWhenTheDatabaseFails drives it through fetch_url; tools' TestAnUnrecordedWebReadWithholdsTheContent counts its one record)",
		guard.ReasonConnectCheck:         "the connect-time check refuses an address the decision did not check; with the guard's own resolver and dialer that cannot happen (it is the last line against a broken resolver; guard/netns_test.go drives it)",
		tools.ReasonBrowserOwn:           "the screenshot browser's own requests are recorded under the caller browser, never a tool or the proxy; only Chromium's background services make them (tools' TestChromiumsOwnTrafficIsNeverTheAgents and TestPageHostsScreen drive it)",
	},
	tools.FetchURLName: {
		guard.ReasonTunnelName:         "fetch_url opens no tunnels; its client sends the host it decided",
		guard.ReasonProxyAuth:          "only the proxy takes credentials",
		tools.ReasonBadSize:            "a screenshot's viewport",
		tools.ReasonBrowser:            "fetch_url runs no browser",
		tools.ReasonUnknownIntegration: "an integration's name",
		guard.ReasonCrossOriginBody:    "fetch_url sends GET, without a body",
	},
	tools.CallIntegrationName: {
		guard.ReasonTunnelName:   "integrations open no tunnels; their client sends the host it decided",
		guard.ReasonProxyAuth:    "only the proxy takes credentials",
		tools.ReasonBadSize:      "a screenshot's viewport",
		tools.ReasonBrowser:      "integrations run no browser",
		tools.ReasonContentType:  "an integration shows any body, as text or as its size",
		tools.ReasonReadsPerTurn: "the page budget is fetch_url's",
		tools.ReasonBadStart:     "an integration's answer has no start offset",
	},
	tools.TakeScreenshotName: {
		guard.ReasonTunnelName:         "Chromium's tunnels carry the host they were opened to; the proxy's own case drives it",
		guard.ReasonProxyAuth:          "the screenshot's credential is issued for the call",
		guard.ReasonRedirects:          "the browser follows redirects hop by hop through the proxy, which decides each hop; Chromium's own limit ends a loop as a failed load",
		guard.ReasonBadRedirect:        "Chromium shows a redirect without a Location as a page",
		guard.ReasonDeclaredSize:       "the browser reads pages through the proxy, which streams bodies without max_bytes",
		guard.ReasonStreamedSize:       "as declared_size",
		tools.ReasonContentType:        "a browser shows any type",
		tools.ReasonReadsPerTurn:       "the page budget is fetch_url's",
		tools.ReasonBadStart:           "a screenshot has no start offset",
		tools.ReasonUnknownIntegration: "an integration's name",
		guard.ReasonCrossOriginBody:    "page loads are the browser's, through the proxy",
	},
	"proxy": {
		guard.ReasonBadURL:             "an absolute-URI request is parsed by the HTTP server, which answers 400 before the proxy decides",
		guard.ReasonScheme:             "a proxy request is http, or CONNECT for https",
		guard.ReasonEmptyHost:          "as bad_url",
		guard.ReasonCredentials:        "the HTTP server answers a request URI with user:password@ with 400 before the proxy decides",
		guard.ReasonRedirects:          "the proxy passes redirects back to the client",
		guard.ReasonBadRedirect:        "as redirects",
		guard.ReasonDeclaredSize:       "the proxy streams bodies; max_bytes is the tools' limit",
		guard.ReasonStreamedSize:       "as declared_size",
		tools.ReasonContentType:        "the proxy passes any type",
		tools.ReasonReadsPerTurn:       "a tool's budget",
		tools.ReasonBadStart:           "a tool's input",
		tools.ReasonBadSize:            "a tool's input",
		tools.ReasonBrowser:            "the proxy runs no browser",
		tools.ReasonUnknownIntegration: "a tool's input",
		tools.ReasonBadParams:          "a tool's input",
		guard.ReasonCrossOriginBody:    "as redirects",
	},
}

// TestEveryRefusalIsOneRecord drives every refusal reason of every tool
// and of the proxy, and checks that each is one decision record: one log
// line, one metric increment and one refusal row, of the right reason
// and kind. The reasons a tool cannot give are listed, with why.
func TestEveryRefusalIsOneRecord(t *testing.T) {
	e := newRecordEnv(t)
	cases := refusalCases()
	covered := map[string]map[guard.Reason]bool{}
	for _, c := range cases {
		if covered[c.tool] == nil {
			covered[c.tool] = map[guard.Reason]bool{}
		}
		covered[c.tool][c.reason] = true
	}
	for tool, seen := range covered {
		for _, r := range slices.Concat(guard.Reasons, tools.Reasons) {
			why, listed := notThroughATool[tool][r]
			if _, any := notThroughATool["*"][r]; any {
				listed, why = true, "listed for every tool"
			}
			switch {
			case !seen[r] && !listed:
				t.Errorf("%s: no case drives %s, and it is not listed with a reason why", tool, r)
			case seen[r] && listed:
				t.Errorf("%s: %s is driven, but also listed as impossible (%s)", tool, r, why)
			}
		}
	}

	skipBrowser, err := browsertest.Check()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.browser && skipBrowser != "" {
				t.Skip(skipBrowser)
			}
			// A browser loads a page in well under the shortest timeout on
			// an idle machine, not always under -race on a loaded one: only
			// the timeout's own case keeps the shortest.
			if c.browser && c.reason != guard.ReasonTimeout {
				e.settings.Guard.Timeout = 20 * time.Second
				defer func() { e.settings.Guard.Timeout = guard.MinTimeout }()
			}
			e.setPolicy(t, c.allow...)
			defer e.setPolicy(t)
			if c.setup != nil {
				c.setup(t, e)
			}
			before := e.sink.counts(t)
			ref := c.act(t, e)
			after := e.sink.counts(t)
			lines, metrics, rows := after.lines[len(before.lines):], after.metrics[len(before.metrics):], after.rows[len(before.rows):]
			if len(lines) != len(metrics) {
				t.Fatalf("%d log lines for %d metric increments", len(lines), len(metrics))
			}
			// The decision's own record (the call's, or the proxied
			// request's for the proxy), and for a browser case the
			// proxy's refusal of the page's request.
			var calls, proxiedRefusals, refused []guard.Record
			for _, rec := range metrics {
				switch {
				case rec.Proxied == (c.tool == "proxy"):
					calls = append(calls, rec)
				case rec.Refusal != nil && !isFavicon(rec.URL):
					proxiedRefusals = append(proxiedRefusals, rec)
				}
				// A burst record (the same call refused again, e.g.
				// Chromium's favicon fetch) has no row of its own: the
				// first refusal's row counts for it.
				if rec.Refusal != nil && !rec.Burst {
					refused = append(refused, rec)
				}
			}
			if !c.browser && len(metrics) != 1 {
				t.Fatalf("%d records, want exactly one: %+v", len(metrics), metrics)
			}
			if len(calls) != 1 {
				t.Fatalf("%d records of the call, want one: %+v", len(calls), metrics)
			}
			rec := calls[0]
			if rec.Refusal == nil || rec.Refusal.Reason != c.reason || rec.Refusal.KindOf() != c.kind || rec.Caller.Tool != c.tool {
				t.Fatalf("record %+v (refusal %+v), want %s %s/%s", rec, rec.Refusal, c.tool, c.reason, c.kind)
			}
			wantProxied := 0
			if c.proxied != "" {
				wantProxied = 1
			}
			if len(proxiedRefusals) != wantProxied {
				t.Fatalf("%d proxied refusals of the page's requests, want %d: %+v", len(proxiedRefusals), wantProxied, proxiedRefusals)
			}
			for _, p := range proxiedRefusals {
				if p.Refusal.Reason != c.proxied || p.Caller.Tool != c.tool {
					t.Fatalf("proxied record %+v (refusal %+v), want %s %s", p, p.Refusal, c.tool, c.proxied)
				}
			}
			if ref != nil && (ref.Reason != c.reason) {
				t.Fatalf("the agent was told %s, the record says %s", ref.Reason, c.reason)
			}

			// One row per refused record, each marked as what it was.
			if len(rows) != len(refused) {
				t.Fatalf("%d refusal rows for %d refused records: rows %+v\nrecords %+v", len(rows), len(refused), rows, refused)
			}
			var callRows, proxiedRows []models.Refusal
			for _, row := range rows {
				switch {
				case row.Proxied == (c.tool == "proxy"):
					callRows = append(callRows, row)
				case !isFavicon(row.URL):
					proxiedRows = append(proxiedRows, row)
				}
			}
			if len(callRows) != 1 || callRows[0].Reason != string(c.reason) || callRows[0].Tool != c.tool || callRows[0].Kind != string(c.kind) {
				t.Fatalf("rows of the call %+v, want one %s %s/%s", callRows, c.tool, c.reason, c.kind)
			}
			if len(proxiedRows) != wantProxied {
				t.Fatalf("%d proxied rows, want %d: %+v", len(proxiedRows), wantProxied, proxiedRows)
			}
			for _, row := range proxiedRows {
				if row.Reason != string(c.proxied) || row.Tool != c.tool {
					t.Fatalf("proxied row %+v, want %s %s", row, c.tool, c.proxied)
				}
			}

			var callLines []map[string]any
			for _, l := range lines {
				if l[LogProxied] == (c.tool == "proxy") {
					callLines = append(callLines, l)
				}
			}
			if len(callLines) != 1 {
				t.Fatalf("%d log lines of the call, want one: %v", len(callLines), lines)
			}
			line := callLines[0]
			if line["msg"] != DecisionRefused || line[LogDecision] != DecisionRefused || line[LogReason] != string(c.reason) ||
				line[LogKind] != string(c.kind) || line[LogTool] != c.tool {
				t.Fatalf("log line %v", line)
			}
		})
	}
}

// TestAllowedThenTooLargeCountsOnce: a read allowed at its headers whose
// body then passes max_bytes is one decision, the refusal, in the log,
// the metrics and the refusal log; not an allowed one too.
func TestAllowedThenTooLargeCountsOnce(t *testing.T) {
	e := newRecordEnv(t)
	for _, path := range []string{"/declared", "/streamed"} {
		before := e.sink.counts(t)
		e.call(t, tools.FetchURLName, "T"+path, `{"url": "http://site.example.com`+path+`"}`)
		after := e.sink.counts(t)
		if n := len(after.metrics) - len(before.metrics); n != 1 {
			t.Fatalf("%s: %d metric increments, want 1: %+v", path, n, after.metrics[len(before.metrics):])
		}
		if n := len(after.lines) - len(before.lines); n != 1 {
			t.Fatalf("%s: %d log lines, want 1", path, n)
		}
		if rec := after.metrics[len(after.metrics)-1]; rec.Refusal == nil || rec.Refusal.Code != guard.CodeTooLarge {
			t.Fatalf("%s: the one record is %+v, want too_large", path, rec)
		}
	}
}

// TestCachedReadIsOneRecordMarkedCached: reading on from the cache sends
// nothing and is still one decision, marked cached.
func TestCachedReadIsOneRecordMarkedCached(t *testing.T) {
	e := newRecordEnv(t)
	e.settings.PageChars = 20
	const args = `{"url": "http://site.example.com/page"}`
	if res := e.call(t, tools.FetchURLName, "T-1", args); !res.OK() {
		t.Fatal(res.Refusal)
	}
	dials := len(e.dialer.Dials())
	before := e.sink.counts(t)
	if res := e.call(t, tools.FetchURLName, "T-1", `{"url": "http://site.example.com/page", "start": 5}`); !res.OK() {
		t.Fatal(res.Refusal)
	}
	after := e.sink.counts(t)
	if n := len(e.dialer.Dials()); n != dials {
		t.Fatalf("reading on from the cache dialled %d times", n-dials)
	}
	recs, lines := after.metrics[len(before.metrics):], after.lines[len(before.lines):]
	if len(recs) != 1 || !recs[0].Allowed() || !recs[0].Cached || recs[0].URL != "http://site.example.com/page" || recs[0].Port != 80 {
		t.Fatalf("records %+v, want one allowed and cached", recs)
	}
	if len(lines) != 1 || lines[0][LogCached] != true || lines[0]["msg"] != DecisionAllowed || len(after.rows) != len(before.rows) {
		t.Fatalf("log %v, rows %d→%d", lines, len(before.rows), len(after.rows))
	}
	if first := before.lines[len(before.lines)-1]; first[LogCached] != false {
		t.Fatalf("the first read is logged as cached: %v", first)
	}
}

// TestAllowedProxiedRequestIsOneRecord: a request the proxy lets through,
// forwarded or tunnelled, is one decision: one allowed record marked
// proxied, one log line, one metric increment, and no refusal row.
func TestAllowedProxiedRequestIsOneRecord(t *testing.T) {
	e := newRecordEnv(t)
	for _, c := range []struct{ method, target, url string }{
		{"GET", "http://site.example.com/page", "http://site.example.com/page"},
		{"CONNECT", "site.example.com:443", "https://site.example.com:443/"},
	} {
		t.Run(c.method, func(t *testing.T) {
			before := e.sink.counts(t)
			if status := e.viaProxy(t, c.method, c.target, e.token); status != http.StatusOK {
				t.Fatalf("the proxy answered %d", status)
			}
			// A tunnel is recorded once its first message is checked (here:
			// the client closed it without one), just after the 200.
			after := e.sink.counts(t)
			for end := time.Now().Add(5 * time.Second); len(after.metrics) == len(before.metrics) && time.Now().Before(end); after = e.sink.counts(t) {
				time.Sleep(10 * time.Millisecond)
			}
			recs, lines := after.metrics[len(before.metrics):], after.lines[len(before.lines):]
			if len(recs) != 1 || !recs[0].Allowed() || !recs[0].Proxied || recs[0].Caller.Tool != "proxy" || recs[0].URL != c.url {
				t.Fatalf("records %+v, want one allowed proxied record of %s", recs, c.url)
			}
			if len(lines) != 1 || lines[0][LogDecision] != DecisionAllowed || lines[0][LogProxied] != true {
				t.Fatalf("log lines %v, want one allowed and proxied", lines)
			}
			if n := len(after.rows) - len(before.rows); n != 0 {
				t.Fatalf("%d refusal rows for an allowed request", n)
			}
		})
	}
}

// TestRefusedURLIsNeverDialled: a refused URL opens no connection on any
// path: fetch_url, call_integration, take_screenshot, the proxy.
func TestRefusedURLIsNeverDialled(t *testing.T) {
	e := newRecordEnv(t)
	e.failLaunch.Store(true) // a refused screenshot must not even start a browser
	e.resolver.Answer("rebind.example.com", "10.0.0.7")
	for _, u := range []string{"http://10.0.0.1/", "http://169.254.169.254/latest/", "http://rebind.example.com/", "http://localhost/"} {
		e.call(t, tools.FetchURLName, "T", `{"url": "`+u+`"}`)
		e.probe("GET", u)
		e.call(t, tools.CallIntegrationName, "T", `{"name": "probe"}`)
		e.call(t, tools.TakeScreenshotName, "T", `{"url": "`+u+`"}`)
		e.viaProxy(t, "GET", u, e.token)
	}
	if d := e.dialer.Dials(); len(d) != 0 {
		t.Fatalf("refused URLs were dialled: %v", d)
	}
	if c := e.sink.counts(t); len(c.rows) != 16 || len(c.metrics) != 16 {
		t.Fatalf("%d rows and %d records for 16 refusals", len(c.rows), len(c.metrics))
	}
}
