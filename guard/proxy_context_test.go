package guard

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

// TestProxyContextCarriesCallerAndUser: the proxy's request context
// answers the caller and the credential's user name, and passes every
// other key to the context beneath; a forwarded request's context adds
// the permit only for an allowed decision.
func TestProxyContextCarriesCallerAndUser(t *testing.T) {
	type otherKey struct{}
	base := context.WithValue(context.Background(), otherKey{}, "beneath")
	who := proxyCaller{caller: Caller{Tool: "proxy", Agent: "a1", Ticket: "SUP-1"}, user: "u1"}
	c := &proxyContext{Context: base, who: who}
	if got := CallerFrom(c); got != who.caller {
		t.Fatalf("CallerFrom = %+v, want %+v", got, who.caller)
	}
	if got, _ := c.Value(proxyUserKey{}).(string); got != "u1" {
		t.Fatalf("user = %q", got)
	}
	if got := c.Value(otherKey{}); got != "beneath" {
		t.Fatalf("other key = %v", got)
	}
	// A caller set over it (a credential's screen) wins, as with WithValue.
	if got := CallerFrom(WithCaller(c, Caller{Tool: "take_screenshot"})); got.Tool != "take_screenshot" {
		t.Fatalf("CallerFrom over WithCaller = %+v", got)
	}
	if got := CallerFrom(context.Background()); got != (Caller{}) {
		t.Fatalf("CallerFrom(empty) = %+v", got)
	}

	// A forwarded request's context holds the caller itself, over the
	// request's.
	fc := &forwardContext{Context: base, who: who, u: url.URL{Scheme: "http", Host: "x.example.com"}}
	if got, _ := fc.Value(proxyUserKey{}).(string); got != "u1" || fc.Value(otherKey{}) != "beneath" {
		t.Fatalf("forwarded: user = %q, other key = %v", got, fc.Value(otherKey{}))
	}
	fc.d = Decision{Host: "x.example.com", Port: 80, resolved: addrs("93.184.216.34")}
	if v := fc.Value(permitKey{}); v != nil {
		t.Fatalf("a refused decision's context carries a permit: %v", v)
	}
	fc.d.Allowed = true
	pm, _ := fc.Value(permitKey{}).(*permit)
	if pm == nil || pm.host != "x.example.com" || pm.port != 80 || len(pm.addrs) != 1 {
		t.Fatalf("permit = %+v", pm)
	}
	if CallerFrom(fc) != who.caller {
		t.Fatal("the forwarded request's context lost the caller")
	}
}

func TestParseBasic(t *testing.T) {
	enc := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	long := strings.Repeat("p", 400) // past the stack buffer
	for _, c := range []struct {
		header, user, pass string
		ok                 bool
	}{
		{enc("agent:obt_secret"), "agent", "obt_secret", true},
		{"basic " + base64.StdEncoding.EncodeToString([]byte("a:b")), "a", "b", true},
		{enc("agent:" + long), "agent", long, true},
		{enc(":only-pass"), "", "only-pass", true},
		{enc("no-colon"), "", "", false},
		{"Basic !!!", "", "", false},
		{"Bearer abc", "", "", false},
		{"Basic", "", "", false},
	} {
		user, pass, ok := parseBasic(c.header)
		if ok != c.ok || (ok && (user != c.user || pass != c.pass)) {
			t.Errorf("parseBasic(%.40q) = %q, %.20q, %v; want %q, %.20q, %v", c.header, user, pass, ok, c.user, c.pass, c.ok)
		}
	}
}

func TestIsEventStream(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/event-stream":                true,
		"Text/Event-Stream; charset=utf-8": true,
		" text/event-stream ;x=y":          true,
		"text/plain":                       false,
		"text/event-streams":               false,
		"":                                 false,
	} {
		if got := isEventStream(ct); got != want {
			t.Errorf("isEventStream(%q) = %v", ct, got)
		}
	}
}
