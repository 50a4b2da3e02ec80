package tools

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// TestBrowserToolsFollowTheSetting: the tools are offered only while the
// setting is on, a change is announced to the registry (and so to MCP
// clients), and a call while off is refused with why, without any
// browser.
func TestBrowserToolsFollowTheSetting(t *testing.T) {
	g := guard.New(guard.Options{})
	defer g.Close()
	var mu sync.Mutex
	mode := BrowserOff
	settings := func() Settings {
		mu.Lock()
		defer mu.Unlock()
		s := DefaultSettings()
		s.Browser = mode
		return s
	}
	shots := NewScreenshotter(g, nil, settings, func() (ShotBrowser, func() error, error) {
		t.Fatal("the browser was launched")
		return nil, nil, nil
	})
	tabs := NewTabs(shots, settings)
	defer tabs.Close()
	changed := make(chan struct{}, 4)
	tabs.OnChange(func() { changed <- struct{}{} })
	reg := Builtin(Deps{Guard: g, Settings: settings, Shots: shots, Browser: tabs})
	if slices.Contains(reg.Names(), BrowserOpenName) {
		t.Fatalf("offered while off: %v", reg.Names())
	}
	res, err := reg.Call(context.Background(), Call{Tool: BrowserOpenName, Turn: Turn{Agent: "a", Thread: "T"}, Args: json.RawMessage(`{"url": "https://example.com/"}`)})
	if err != nil || res.OK() || res.Refusal.Reason != ReasonBrowserOff || res.Refusal.Remedy != guard.ChangeSetting("browser") {
		t.Fatalf("a call while off: %v %+v", err, res.Refusal)
	}
	// The JSON API serves the tool while off, as MCP does: a call is
	// answered with why (the setting), not with "no such tool".
	if api := reg.API(nil); !api.Serves(BrowserOpenName) || slices.Contains(api.Names(), BrowserOpenName) {
		t.Fatalf("while off the API serves %s: %v, lists it: %v; want served but not listed", BrowserOpenName, api.Serves(BrowserOpenName), api.Names())
	}
	mu.Lock()
	mode = BrowserReadOnly
	mu.Unlock()
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("turning the tools on was not announced")
	}
	names := reg.Names()
	for _, n := range BrowserToolNames() {
		if !slices.Contains(names, n) {
			t.Fatalf("%s is not offered while on: %v", n, names)
		}
	}
	// Refused before any browser: a non-web address, and a URL the guard refuses.
	for _, u := range []string{"file:///etc/passwd", "http://169.254.169.254/latest/meta-data/"} {
		res, _ := reg.Call(context.Background(), Call{Tool: BrowserOpenName, Turn: Turn{Agent: "a", Thread: "T"}, Args: json.RawMessage(`{"url": "` + u + `"}`)})
		if res.OK() {
			t.Fatalf("%s was opened", u)
		}
	}
	if tabs.Live() != 0 {
		t.Fatalf("%d tabs after refused opens", tabs.Live())
	}
}
