package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
)

// TestChromiumsOwnTrafficIsNeverTheAgents (issue 9, finding 9): a plain
// page, with a sign-in form that invites autofill, a link and a search
// box, makes no proxied request but for its own host. Chromium's own
// requests (autofill, optimization hints, field trials, safe browsing) go
// nowhere, and are never recorded under the agent's name. The resolver
// is the test's, so nothing leaves the machine.
func TestChromiumsOwnTrafficIsNeverTheAgents(t *testing.T) {
	launch := realChromium(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Sign in</title></head><body>
<form action="/login" method="post">
<label>Name <input name="name" autocomplete="name"></label>
<label>Email <input type="email" name="email" autocomplete="email"></label>
<label>Address <input name="address" autocomplete="street-address"></label>
<label>Card <input name="cc" autocomplete="cc-number"></label>
<label>Password <input type="password" name="password" autocomplete="current-password"></label>
<button>Sign in</button></form>
<form action="/search"><input type="search" name="q"></form>
<a href="/help">Help</a>
</body></html>`)
	}))
	defer page.Close()
	host := strings.TrimPrefix(page.URL, "http://")
	e := newShotEnv(t, launch, host)
	for range 2 { // the second call reuses the browser, when more background work has started
		res := e.call(t, Turn{Agent: "helpdesk", Thread: "T-9"}, fmt.Sprintf(`{"url": %q, "full_page": true}`, page.URL+"/"))
		if !res.OK() {
			t.Fatalf("screenshot refused: %+v", res.Refusal)
		}
	}
	for _, rec := range e.Records() {
		if !rec.Proxied || strings.HasPrefix(rec.URL, page.URL+"/") {
			continue
		}
		// Past the launch flags, the page's proxy screen refuses what
		// the page never asked for, as the browser's own.
		if rec.Caller != (guard.Caller{Tool: BrowserCaller}) || rec.Refusal == nil || rec.Refusal.Reason != ReasonBrowserOwn || rec.Refusal.Agent != "" {
			t.Errorf("a request the page never made was proxied and charged to %+v: %s (refused: %v)", rec.Caller, rec.URL, rec.Refusal != nil)
		}
		t.Logf("the browser's own request was refused: %s", rec.URL)
	}
}
