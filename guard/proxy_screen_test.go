package guard

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestScreenRefusesWhatTheCallNeverAsked: a request the call's screen
// refuses is answered with the screen's refusal before any lookup or dial,
// recorded once under the screen's caller, never the call's, and is not
// among the call's refusals; requests it passes are decided as usual.
func TestScreenRefusesWhatTheCallNeverAsked(t *testing.T) {
	f := newProxyFixture(t, mustPolicy(t, DefaultSettings(), "www.example.com", "autofill.example.net"), nil)
	call := Caller{Tool: "screenshot", Agent: "helpdesk-bot"}
	cred := f.proxy.Credential(call)
	var asked []string
	cred.Screen(Caller{Tool: "browser"}, func(_ context.Context, target string) *Refusal {
		asked = append(asked, target)
		if strings.HasPrefix(target, "http://www.example.com/") {
			return nil
		}
		return &Refusal{Code: CodeForbidden, Reason: "not_the_pages", URL: target, Host: "autofill.example.net", Message: "The page never asked for this.", Fix: "None."}
	})
	resp, _, _ := rawRequest(t, f.proxy.Addr(), "CONNECT autofill.example.net:443", basic(cred.Username, cred.Password))
	if body := readBody(t, resp); resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Outbound-Reason") != "not_the_pages" || !strings.Contains(body, "never asked") {
		t.Fatalf("CONNECT: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if d, l := f.dialer.Dials(), f.resolver.Lookups(); len(d) != 0 || len(l) != 0 {
		t.Fatalf("a screened request was looked up %v or dialled %v", l, d)
	}
	ev := f.reports.Events()
	if len(ev) != 1 || ev[0].Caller != (Caller{Tool: "browser"}) || ev[0].Refusal.Agent != "" || ev[0].Burst || !ev[0].Proxied {
		t.Fatalf("records: %+v", ev)
	}
	if got := cred.Refused(); got.Count != 0 || cred.Refusal("https://autofill.example.net/") != nil {
		t.Fatalf("the screened request was charged to the call: %+v", got)
	}
	// A request the screen passes is decided as the call's: here refused
	// by the network (nothing answers), and recorded when the call ends.
	r2, err := f.client(t, cred.Username, cred.Password, nil).Get("http://www.example.com/page")
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, r2)
	cred.Revoke()
	ev = f.reports.Events()
	if len(ev) != 2 || ev[1].Caller != call || cred.Refused().Count != 1 {
		t.Fatalf("the passed request: %+v", ev)
	}
	if strings.Join(asked, " ") != "https://autofill.example.net:443/ http://www.example.com/page" {
		t.Fatalf("the screen was asked about %q", asked)
	}
}
