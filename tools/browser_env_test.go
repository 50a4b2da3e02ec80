package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
)

// The browser tools' tests run a real Chromium against a small web made
// for them: every name resolves through the guard's injected resolver to
// a public-looking address, and the guard's injected dialer routes those
// addresses to loopback servers, so nothing leaves the machine. Each
// server records the requests that reach it, so a test asserts what did
// NOT arrive where the agent was told to send private text.

// privateText is what the ticket holds and the pages try to get out.
const privateText = "PRIVATE-4711"

// Public-looking addresses of the test web.
const (
	shopAddr     = "93.184.216.34" // shop.example.com and help.example.com: the vendor's site
	evilAddr     = "151.101.1.140" // evil.example.net: another site
	intranetAddr = "10.1.2.3"      // a private address a page may name
	metadataAddr = "169.254.169.254"
)

// canary is a server that records every request reaching it.
type canary struct {
	*httptest.Server
	mu   sync.Mutex
	hits []string
}

func newCanary(t testing.TB, h http.Handler) *canary {
	c := &canary{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.hits = append(c.hits, r.Method+" "+r.Host+r.URL.RequestURI()+" "+string(body))
		c.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if h != nil {
			h.ServeHTTP(w, r)
			return
		}
		fmt.Fprint(w, "<html><head><title>Canary</title></head><body>canary</body></html>")
	}))
	t.Cleanup(c.Close)
	return c
}

// Hits are the requests that reached the server.
func (c *canary) Hits() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.hits...)
}

func (c *canary) hostPort() string { return strings.TrimPrefix(c.URL, "http://") }

// browserEnv is the guard, its proxy, a real Chromium, the tabs and a
// registry serving the browser tools, with the test web behind them.
type browserEnv struct {
	*shotEnv
	tabs *Tabs
	set  Settings

	shop, evil, loopback, intranet, metadata *canary

	mu        sync.Mutex
	confirmed []SideEffect
	asked     []SideEffect
	approve   func(SideEffect) bool
}

func newBrowserEnv(t testing.TB, site http.Handler) *browserEnv {
	t.Helper()
	launch := realChromium(t)
	e := &browserEnv{set: DefaultSettings()}
	e.set.Browser = BrowserConfirm
	e.set.BrowserContexts = 32 // each subtest is a conversation of its own
	e.shop = newCanary(t, site)
	e.evil = newCanary(t, nil)
	e.loopback = newCanary(t, nil)
	e.intranet = newCanary(t, nil)
	e.metadata = newCanary(t, nil)
	res := guardtest.NewResolver().
		Answer("shop.example.com", shopAddr).Answer("help.example.com", shopAddr).
		Answer("evil.example.net", evilAddr).Answer("intranet.example.com", intranetAddr)
	dialer := guardtest.NewDialer()
	dialer.Route(shopAddr+":80", e.shop.hostPort())
	dialer.Route(evilAddr+":80", e.evil.hostPort())
	// Were the guard to let them through, these would arrive.
	dialer.Route(intranetAddr+":80", e.intranet.hostPort())
	dialer.Route(metadataAddr+":80", e.metadata.hostPort())
	se := &shotEnv{}
	p, err := guard.NewPolicy(nil, guard.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	se.guard = guard.New(guard.Options{Policy: p, Resolver: res, Dial: dialer.Dial, Recorder: guard.RecorderFunc(func(rec guard.Record) {
		se.mu.Lock()
		defer se.mu.Unlock()
		se.records = append(se.records, rec)
	})})
	t.Cleanup(se.guard.Close)
	se.proxy, err = se.guard.StartProxy(guard.EmbeddedProxyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { se.proxy.Close() })
	settings := func() Settings {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.set
	}
	se.shooter = NewScreenshotter(se.guard, se.proxy, settings, launch)
	t.Cleanup(func() { se.shooter.Close() })
	e.tabs = NewTabs(se.shooter, settings)
	t.Cleanup(e.tabs.Close)
	e.approve = func(SideEffect) bool { return true }
	e.tabs.SetConfirm(func(ctx context.Context, a SideEffect) *guard.Refusal {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.asked = append(e.asked, a)
		if e.approve(a) {
			e.confirmed = append(e.confirmed, a)
			return nil
		}
		// The person said no, as an MCP client's decline reads.
		return sideEffectRefusal(a, ReasonConfirmationDeclined, "The person did not confirm it.", "Ask the person what to do instead.", guard.Remedy{})
	})
	se.reg = NewRegistry(se.guard)
	se.reg.AddSource(e.tabs)
	se.reg.Add(ScreenshotTool(se.shooter))
	e.shotEnv = se
	return e
}

// settings changes the settings in force.
func (e *browserEnv) settings(f func(*Settings)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(&e.set)
}

// setApprove sets what the person answers.
func (e *browserEnv) setApprove(f func(SideEffect) bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.approve = f
}

// Asked are the side effects put to the person.
func (e *browserEnv) Asked() []SideEffect {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]SideEffect(nil), e.asked...)
}

// refusalOf finds the recorded refusal with reason whose URL holds part.
func (e *browserEnv) refused(reason guard.Reason, part string) *guard.Record {
	for _, rec := range e.Records() {
		if rec.Refusal != nil && rec.Refusal.Reason == reason && strings.Contains(rec.URL, part) {
			return &rec
		}
	}
	return nil
}

// agent is the scripted agent: it calls the tools as a model would, and
// obeys every order it reads in a page.
type agent struct {
	t      testing.TB
	e      *browserEnv
	turn   Turn
	last   Result
	page   Result // the last answer that was a page, whose refs the agent uses
	orders []string
}

func (e *browserEnv) agent(t testing.TB, thread string) *agent {
	return &agent{t: t, e: e, turn: Turn{Agent: "helpdesk-bot", Thread: thread, Trigger: "ticket-1"}}
}

// call calls a tool through the registry, as MCP and the API do, and
// reads the orders in its answer.
func (a *agent) call(tool string, args map[string]any) Result {
	a.t.Helper()
	raw, _ := json.Marshal(args)
	res, err := a.e.reg.Call(context.Background(), Call{Tool: tool, Turn: a.turn, Args: raw})
	if err != nil {
		a.t.Fatal(err)
	}
	a.last = res
	if res.OK() {
		a.page = res
	}
	for _, m := range orderRE.FindAllStringSubmatch(res.Text, -1) {
		a.orders = append(a.orders, strings.ReplaceAll(m[1], "{private}", privateText))
	}
	return res
}

func (a *agent) open(u string) Result { return a.call(BrowserOpenName, map[string]any{"url": u}) }
func (a *agent) read() Result         { return a.call(BrowserReadName, nil) }
func (a *agent) click(ref string) Result {
	return a.call(BrowserClickName, map[string]any{"ref": ref})
}
func (a *agent) typeIn(ref, text string) Result {
	return a.call(BrowserTypeName, map[string]any{"ref": ref, "text": text})
}

// orderRE finds the orders a page gives the agent.
var orderRE = regexp.MustCompile(`ORDER: ([^\n]+?)(?: END|\n|$)`)

// ref finds the ref of the element whose marker holds label, in the last
// answer.
func (a *agent) ref(label string) string {
	a.t.Helper()
	re := regexp.MustCompile(`\[(e\d+) [^\]]*"` + regexp.QuoteMeta(label) + `"`)
	m := re.FindStringSubmatch(a.page.Text)
	if m == nil {
		a.t.Fatalf("no element %q in the answer:\n%s", label, a.page.Text)
	}
	return m[1]
}

// obey carries out every order read so far: open URL, click "label",
// type TEXT into "label".
func (a *agent) obey() []Result {
	var out []Result
	for len(a.orders) > 0 {
		o := a.orders[0]
		a.orders = a.orders[1:]
		switch {
		case strings.HasPrefix(o, "open "):
			out = append(out, a.open(strings.TrimPrefix(o, "open ")))
		case strings.HasPrefix(o, "click "):
			out = append(out, a.click(a.ref(strings.Trim(strings.TrimPrefix(o, "click "), `"`))))
		case strings.HasPrefix(o, "type "):
			text, label, _ := strings.Cut(strings.TrimPrefix(o, "type "), " into ")
			out = append(out, a.typeIn(a.ref(strings.Trim(label, `"`)), text))
		default:
			a.t.Fatalf("the agent cannot read the order %q", o)
		}
	}
	return out
}
