package tools

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
)

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("no %s on this machine: %v", ip, err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// proxiedRefusal is the refusal the embedded proxy recorded for target.
func (e *shotEnv) proxiedRefusal(t *testing.T, target string) *guard.Refusal {
	t.Helper()
	for _, rec := range e.Records() {
		if rec.Proxied && rec.Refusal != nil && rec.URL == target {
			return rec.Refusal
		}
	}
	t.Fatalf("the proxy recorded no refusal of %s; records %+v", target, e.Records())
	return nil
}

// TestRefusedMainNavigationAnswersWithTheProxysRefusal: when the proxy
// refuses the page's own navigation (a redirect into the network, a host
// that is down), the screenshot answers with the very refusal the proxy
// recorded, its remedy, entry and addresses intact, not one rebuilt from
// the proxy's headers.
func TestRefusedMainNavigationAnswersWithTheProxysRefusal(t *testing.T) {
	launch := realChromium(t)
	down := freeAddr(t, "127.0.0.1")
	internal := freeAddr(t, "127.0.0.2")
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-down":
			http.Redirect(w, r, "http://"+down+"/status", http.StatusFound)
		case "/to-internal":
			http.Redirect(w, r, "http://"+internal+"/admin", http.StatusFound)
		case "/to-internal-tls":
			http.Redirect(w, r, "https://"+internal+"/admin", http.StatusFound)
		}
	}))
	defer page.Close()
	pageHost := strings.TrimPrefix(page.URL, "http://")
	e := newShotEnv(t, launch, pageHost, down)
	loopback := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	tests := []struct {
		path, target string
		check        func(r *guard.Refusal) bool
	}{
		{"/to-down", "http://" + down + "/status", func(r *guard.Refusal) bool {
			return r.Reason == guard.ReasonConnect && r.KindOf() == guard.KindNetwork && r.Entry == down && slices.Equal(r.Addresses, loopback)
		}},
		{"/to-internal", "http://" + internal + "/admin", func(r *guard.Refusal) bool {
			return r.Reason == guard.ReasonInternalAddress && r.Remedy == guard.AddEntry(internal) &&
				slices.Equal(r.Addresses, []netip.Addr{netip.MustParseAddr("127.0.0.2")})
		}},
		{"/to-internal-tls", "https://" + internal + "/", func(r *guard.Refusal) bool {
			return r.Reason == guard.ReasonInternalAddress && r.Remedy == guard.AddEntry(internal)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := e.call(t, Turn{Agent: "helpdesk", Thread: "T-9"}, fmt.Sprintf(`{"url": %q}`, page.URL+tt.path))
			if res.OK() {
				t.Fatalf("the screenshot was taken: %s", res.Text)
			}
			want := e.proxiedRefusal(t, tt.target)
			if res.Refusal != want {
				t.Fatalf("answered %+v\nwant the proxy's own value %+v", res.Refusal, want)
			}
			if !tt.check(res.Refusal) || res.Refusal.Tool != TakeScreenshotName || res.Refusal.Agent != "helpdesk" {
				t.Fatalf("the refusal lost its facts: %+v", res.Refusal)
			}
			if res.Text != RefusalAnswer(TakeScreenshotName, want) || strings.Contains(res.Text, "See the refusal log") {
				t.Fatalf("the agent reads:\n%s", res.Text)
			}
			// The API gives agents the same value, as agents may read it:
			// an internal target's entry is not in it.
			if api := res.API.(ScreenshotResponse); !reflect.DeepEqual(api.Error, want.ForAgent()) {
				t.Fatalf("the API answers %+v, want %+v", api.Error, want.ForAgent())
			}
		})
	}
}

// TestScreenshotTimeoutIsPlaywrightsTimeout: a page that never finishes
// loading within the tool's timeout is a network timeout with the timeout
// setting as its remedy, told by Playwright's timeout error, not its text.
func TestScreenshotTimeoutIsPlaywrightsTimeout(t *testing.T) {
	launch := realChromium(t)
	release := make(chan struct{})
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer page.Close()
	defer close(release)
	e := newShotEnv(t, launch, strings.TrimPrefix(page.URL, "http://"))
	short := func() Settings {
		s := DefaultSettings()
		s.Guard.Timeout = time.Second // the proxy's own timeout stays at 15s
		return s
	}
	shooter := NewScreenshotter(e.guard, e.proxy, short, launch)
	defer shooter.Close()
	res := shooter.Take(context.Background(), Turn{Agent: "a"}, ScreenshotInput{URL: page.URL + "/slow"})
	if res.OK() || res.Refusal.Reason != guard.ReasonTimeout || res.Refusal.KindOf() != guard.KindNetwork ||
		res.Refusal.Remedy != guard.ChangeSetting(guard.SettingTimeout) || !strings.Contains(res.Refusal.Message, "within 1s.") {
		t.Fatalf("got %+v, want a network timeout naming 1s", res.Refusal)
	}
}
