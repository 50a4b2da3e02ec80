package guard

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestHandoverChargesEachCallItsOwnRefusals: a credential kept across
// calls records the first call's held refusal at the handover, and the
// next call's requests and refusals are the next caller's alone.
func TestHandoverChargesEachCallItsOwnRefusals(t *testing.T) {
	f := newProxyFixture(t, mustPolicy(t, DefaultSettings(), "www.example.com"), nil)
	first := Caller{Tool: "browser_open", Agent: "bot", Thread: "T1"}
	cred := f.proxy.Credential(first)
	get := func(u string) {
		t.Helper()
		resp, err := f.client(t, cred.Username, cred.Password, nil).Get(u)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
	}
	get("http://blocked.example.org/a")
	if n := len(f.reports.Events()); n != 0 {
		t.Fatalf("the first call's refusal was recorded before its call ended: %d records", n)
	}
	second := Caller{Tool: "browser_click", Agent: "bot", Thread: "T1"}
	f.proxy.Handover(cred, second)
	ev := f.reports.Events()
	if len(ev) != 1 || ev[0].Caller != first {
		t.Fatalf("after the handover: %+v", ev)
	}
	if cred.Refusal("http://blocked.example.org/a") != nil || cred.Refused().Count != 0 {
		t.Fatal("the next call reads the last call's refusals")
	}
	get("http://blocked.example.org/b")
	cred.Revoke()
	ev = f.reports.Events()
	if len(ev) != 2 || ev[1].Caller != second || ev[1].Burst {
		t.Fatalf("the second call's refusal: %+v", ev)
	}
	// A revoked credential is not revived by a handover.
	f.proxy.Handover(cred, first)
	resp, _, _ := rawRequest(t, f.proxy.Addr(), "GET http://www.example.com/", basic(cred.Username, cred.Password))
	if resp.StatusCode != http.StatusProxyAuthRequired {
		t.Fatalf("a revoked credential answered %d after a handover", resp.StatusCode)
	}
}

// TestScreenOwnRefusalsAreTheCalls: the own screen refuses before any
// lookup or dial, and its refusal is recorded and kept as the call's.
func TestScreenOwnRefusalsAreTheCalls(t *testing.T) {
	f := newProxyFixture(t, mustPolicy(t, DefaultSettings()), nil)
	call := Caller{Tool: "browser_click", Agent: "bot"}
	cred := f.proxy.Credential(call)
	cred.Screen(Caller{Tool: "browser"}, func(context.Context, string) *Refusal { return nil })
	cred.ScreenOwn(func(_ context.Context, target string) *Refusal {
		if strings.Contains(target, "other.example.net") {
			return &Refusal{Code: CodeForbidden, Reason: "other_site", URL: target, Host: "other.example.net", Message: "Another site.", Fix: "None."}
		}
		return nil
	})
	resp, _, _ := rawRequest(t, f.proxy.Addr(), "CONNECT other.example.net:443", basic(cred.Username, cred.Password))
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Outbound-Reason") != "other_site" {
		t.Fatalf("CONNECT: %d %v", resp.StatusCode, resp.Header)
	}
	if d, l := f.dialer.Dials(), f.resolver.Lookups(); len(d) != 0 || len(l) != 0 {
		t.Fatalf("a screened request was looked up %v or dialled %v", l, d)
	}
	if r := cred.Refusal("https://other.example.net/"); r == nil || r.Reason != "other_site" || r.Tool != "browser_click" {
		t.Fatalf("the call's refusals: %+v", r)
	}
	cred.Revoke()
	if ev := f.reports.Events(); len(ev) != 1 || ev[0].Caller != call || !ev[0].Proxied {
		t.Fatalf("records: %+v", ev)
	}
}
