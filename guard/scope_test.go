package guard

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func mustRules(t testing.TB, rules ...Rule) *Policy {
	t.Helper()
	p, err := NewPolicyRules(rules, DefaultSettings())
	if err != nil {
		t.Fatalf("NewPolicyRules: %v", err)
	}
	return p
}

func as(agent, tool string) context.Context {
	return WithCaller(context.Background(), Caller{Agent: agent, Tool: tool})
}

// The case: the public web stays open for everyone, and only the
// CRM integration may reach the internal CRM host.
func TestInternalHostForOneIntegrationKeepsThePublicWeb(t *testing.T) {
	r := newResolver("crm.intranet.example.com", []string{"10.1.2.3"}, "status.example.com", []string{"93.184.216.34"})
	p := mustRules(t, Rule{Entry: mustEntry(t, "crm.intranet.example.com:8443"), Scope: Scope{Tools: []string{"crm"}}, Internal: true})
	if !p.PublicWeb() {
		t.Fatal("an internal host narrowed the default scope")
	}
	crm := WithCaller(context.Background(), Caller{Agent: "bot", Tool: "call_integration", Service: "crm"})
	if d := p.Decide(crm, r, "https://crm.intranet.example.com:8443/api"); !d.Allowed {
		t.Fatalf("the CRM integration is refused its internal host: %s", d.Message)
	}
	if d := p.Decide(crm, r, "https://status.example.com/"); !d.Allowed {
		t.Fatalf("the CRM integration lost the public web: %s", d.Message)
	}
	for _, ctx := range []context.Context{as("bot", "fetch_url"), as("", ""), WithCaller(context.Background(), Caller{Tool: "call_integration", Service: "orders"})} {
		d := p.Decide(ctx, r, "https://crm.intranet.example.com:8443/api")
		if d.Allowed || !d.Remedy.Internal {
			t.Fatalf("%+v reached the internal host (or was offered a narrowing fix): %+v", CallerFrom(ctx), d)
		}
		if d := p.Decide(ctx, r, "https://status.example.com/"); !d.Allowed {
			t.Fatalf("%+v lost the public web: %s", CallerFrom(ctx), d.Message)
		}
	}
	if got := p.ReachOf(Caller{Tool: "call_integration", Service: "crm"}); !got.PublicWeb || got.Internal != 1 || got.Listed != 0 {
		t.Fatalf("ReachOf(crm) = %+v", got)
	}
}

func TestScopedNarrowingEntryNarrowsOnlyItsScope(t *testing.T) {
	r := newResolver("status.example.com", []string{"93.184.216.34"}, "news.example.net", []string{"93.184.216.35"})
	p := mustRules(t, Rule{Entry: mustEntry(t, "status.example.com"), Scope: Scope{Agents: []string{"bot-a"}, Tools: []string{"fetch_url"}}})
	if d := p.Decide(as("bot-a", "fetch_url"), r, "https://news.example.net/"); d.Allowed || d.Reason != ReasonNotAllowlisted {
		t.Fatalf("bot-a's fetch_url reached an unlisted host: %+v", d)
	}
	if d := p.Decide(as("bot-a", "fetch_url"), r, "https://status.example.com/"); !d.Allowed {
		t.Fatalf("bot-a's fetch_url refused its listed host: %s", d.Message)
	}
	for _, ctx := range []context.Context{as("bot-a", "take_screenshot"), as("bot-b", "fetch_url"), context.Background()} {
		if d := p.Decide(ctx, r, "https://news.example.net/"); !d.Allowed {
			t.Fatalf("%+v was narrowed by a rule for bot-a's fetch_url: %s", CallerFrom(ctx), d.Message)
		}
	}
}

func TestWildcardNeverReachesPrivateAddressesInAnyScope(t *testing.T) {
	r := newResolver("db.corp.example.com", []string{"10.0.0.9"})
	p := mustRules(t, Rule{Entry: mustEntry(t, "*.corp.example.com"), Scope: Scope{Agents: []string{"ops"}}})
	if d := p.Decide(as("ops", "fetch_url"), r, "http://db.corp.example.com/"); d.Allowed || d.Reason != ReasonInternalAddress {
		t.Fatalf("a scoped wildcard reached a private address: %+v", d)
	}
	_, err := NewPolicyRules([]Rule{{Entry: mustEntry(t, "*.corp.example.com"), Internal: true}}, DefaultSettings())
	if err == nil || !strings.Contains(err.Error(), "not a wildcard") {
		t.Fatalf("an internal wildcard was accepted: %v", err)
	}
}

func TestSameEntryInTwoScopesIsNotADuplicate(t *testing.T) {
	e := mustEntry(t, "status.example.com")
	if _, err := NewPolicyRules([]Rule{{Entry: e}, {Entry: e, Scope: Scope{Agents: []string{"a"}}}, {Entry: e, Scope: Scope{Tools: []string{"proxy"}}}}, DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	_, err := NewPolicyRules([]Rule{{Entry: e, Scope: Scope{Agents: []string{"a", "b"}}}, {Entry: e, Scope: Scope{Agents: []string{" b", "a"}}}}, DefaultSettings())
	if err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Fatalf("one entry twice in one scope: %v", err)
	}
}

func TestReportOnlyAllowsAndSaysWhatItWouldRefuse(t *testing.T) {
	r := newResolver("status.example.com", []string{"93.184.216.34"}, "news.example.net", []string{"93.184.216.35"}, "intranet.example.com", []string{"10.0.0.5"})
	p := mustRules(t, Rule{Entry: mustEntry(t, "status.example.com"), ReportOnly: true})
	if !p.PublicWeb() {
		t.Fatal("a report-only entry narrowed the default scope")
	}
	d := p.Decide(context.Background(), r, "https://news.example.net/")
	if !d.Allowed || d.WouldRefuse == nil || d.WouldRefuse.Reason != ReasonNotAllowlisted {
		t.Fatalf("report-only: want allowed with would-refuse not_allowlisted, got %+v", d)
	}
	if d := p.Decide(context.Background(), r, "https://status.example.com/"); !d.Allowed || d.WouldRefuse != nil {
		t.Fatalf("a listed host is marked would-refuse: %+v", d)
	}
	// The floor is never report-only.
	if d := p.Decide(context.Background(), r, "http://intranet.example.com/"); d.Allowed || d.Reason != ReasonInternalAddress {
		t.Fatalf("a private address went through under report-only: %+v", d)
	}
	if d := p.Decide(context.Background(), r, "http://169.254.169.254/"); d.Allowed {
		t.Fatalf("the metadata endpoint went through under report-only: %+v", d)
	}
	if got := p.ReachOf(Caller{}); !got.PublicWeb || got.TrialPublicWeb || got.ReportOnly != 1 {
		t.Fatalf("ReachOf = %+v", got)
	}
}

func TestReportOnlyRefusalIsRecordedOnTheAllowedRequest(t *testing.T) {
	rec := &recordingRecorder{}
	pol := mustRules(t, Rule{Entry: mustEntry(t, "status.example.com"), ReportOnly: true, Scope: Scope{Agents: []string{"bot"}}})
	g := New(Options{Policy: pol, Recorder: rec, Resolver: newResolver("news.example.net", []string{"93.184.216.35"})})
	// A proxied request is the simplest allowed path to exercise without
	// a network: decide it and record as the proxy does.
	d := g.Policy().Decide(as("bot", "proxy"), g.resolver, "https://news.example.net/")
	g.record(as("bot", "proxy"), Record{URL: "https://news.example.net/", Host: d.Host, Port: d.Port, Proxied: true, WouldRefuse: d.WouldRefuse})
	got := rec.All()
	if len(got) != 1 || got[0].Refusal != nil || got[0].WouldRefuse == nil || got[0].WouldRefuse.Agent != "bot" || got[0].WouldRefuse.Tool != "proxy" {
		t.Fatalf("records = %+v", got)
	}
}

// BenchmarkDecideScoped measures a decision under scoped rules: n entries
// spread over 100 agents and three tools, a fifth of them unscoped, for
// a caller some rules name and for one none does. The cost over
// BenchmarkDecide is finding the caller's view: two map lookups.
func BenchmarkDecideScoped(b *testing.B) {
	r := &staticResolver{addrs: []netip.Addr{netip.MustParseAddr("93.184.216.35")}}
	tools := []string{"fetch_url", "take_screenshot", "proxy"}
	for _, n := range []int{10, 10000} {
		rules := make([]Rule, 0, n)
		for i := 0; len(rules) < n-1; i++ {
			text := fmt.Sprintf("host%d.tenant%d.example.com", i, i%97)
			if i%2 == 1 {
				text = fmt.Sprintf("*.zone%d.example.net", i)
			}
			rule := Rule{Entry: mustEntry(b, text)}
			if i%5 != 0 {
				rule.Scope = Scope{Agents: []string{fmt.Sprintf("agent-%d", i%100)}}
				if i%3 == 0 {
					rule.Scope.Tools = []string{tools[i%len(tools)]}
				}
			}
			rules = append(rules, rule)
		}
		rules = append(rules, Rule{Entry: mustEntry(b, "*.docs.example.org")})
		p, err := NewPolicyRules(rules, DefaultSettings())
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			caller Caller
		}{{"named-agent", Caller{Agent: "agent-7", Tool: "fetch_url"}}, {"other-agent", Caller{Agent: "nobody", Tool: "fetch_url"}}} {
			ctx := WithCaller(context.Background(), c.caller)
			b.Run(fmt.Sprintf("%s/entries=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if d := p.Decide(ctx, r, benchNameURL); !d.Allowed {
						b.Fatal(d.Message)
					}
				}
			})
		}
	}
}

// BenchmarkViewFor is the cost scopes add to a decision: finding the
// caller's view among 10,000 rules over 100 agents.
func BenchmarkViewFor(b *testing.B) {
	rules := make([]Rule, 0, 10000)
	for i := range 10000 {
		rules = append(rules, Rule{Entry: mustEntry(b, fmt.Sprintf("host%d.example.com", i)), Scope: Scope{Agents: []string{fmt.Sprintf("agent-%d", i%100)}}})
	}
	p, err := NewPolicyRules(rules, DefaultSettings())
	if err != nil {
		b.Fatal(err)
	}
	c := Caller{Agent: "agent-42", Tool: "fetch_url"}
	b.ReportAllocs()
	for b.Loop() {
		if p.viewFor(c) == nil {
			b.Fatal("no view")
		}
	}
}

// BenchmarkNewPolicyScoped is the cost of a reload: building every view
// of 10,000 rules over 100 agents and three tools.
func BenchmarkNewPolicyScoped(b *testing.B) {
	tools := []string{"fetch_url", "take_screenshot", "proxy"}
	rules := make([]Rule, 0, 10000)
	for i := range 10000 {
		r := Rule{Entry: mustEntry(b, fmt.Sprintf("host%d.example.com", i))}
		if i%5 != 0 {
			r.Scope = Scope{Agents: []string{fmt.Sprintf("agent-%d", i%100)}}
			if i%3 == 0 {
				r.Scope.Tools = []string{tools[i%3]}
			}
		}
		rules = append(rules, r)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewPolicyRules(rules, DefaultSettings()); err != nil {
			b.Fatal(err)
		}
	}
}

// Views of callers naming a service are built on first use, concurrently.
func TestServiceViewsAreBuiltOnceUnderConcurrency(t *testing.T) {
	r := newResolver("crm.intranet.example.com", []string{"10.1.2.3"})
	p := mustRules(t, Rule{Entry: mustEntry(t, "crm.intranet.example.com"), Scope: Scope{Tools: []string{"crm"}}, Internal: true},
		Rule{Entry: mustEntry(t, "status.example.com"), Scope: Scope{Tools: []string{"call_integration"}}})
	done := make(chan Decision, 16)
	for range 16 {
		go func() {
			done <- p.Decide(WithCaller(context.Background(), Caller{Tool: "call_integration", Service: "crm"}), r, "https://crm.intranet.example.com/")
		}()
	}
	for range 16 {
		if d := <-done; !d.Allowed {
			t.Fatalf("the crm integration was refused its host: %s", d.Message)
		}
	}
	// The call_integration entry narrows every integration, crm included,
	// and crm's internal host stays listed for it.
	if got := p.ReachOf(Caller{Tool: "call_integration", Service: "crm"}); got.PublicWeb || got.Listed != 1 || got.Internal != 1 {
		t.Fatalf("ReachOf(crm) = %+v", got)
	}
}

// A PublicOnly caller (a person's safe preview) is not narrowed by the
// allowlist, still reaches the hosts entries name, and never reaches an
// internal address no literal entry names.
func TestPublicOnlyCallerIsNotNarrowed(t *testing.T) {
	r := newResolver("status.vendor.example", []string{"93.184.216.34"}, "docs.example", []string{"93.184.216.35"},
		"wiki.intranet.corp", []string{"10.0.0.5"}, "crm.intranet.corp", []string{"10.0.0.6"})
	p := mustPolicy(t, DefaultSettings(), "docs.example", "crm.intranet.corp", "*.intranet.corp")
	agent := as("bot", "fetch_url")
	person := WithCaller(context.Background(), Caller{Tool: "fetch_url", Agent: "console:ada", PublicOnly: true})
	for _, c := range []struct {
		url           string
		agent, person bool
	}{
		{"https://status.vendor.example/", false, true},
		{"https://docs.example/", true, true},
		{"https://crm.intranet.corp/", true, true},
		{"https://wiki.intranet.corp/", false, false}, // a wildcard never reaches a private address
		{"http://169.254.169.254/", false, false},
		{"http://127.0.0.1:8080/", false, false},
	} {
		if d := p.Decide(agent, r, c.url); d.Allowed != c.agent {
			t.Errorf("agent %s: allowed=%v (%s), want %v", c.url, d.Allowed, d.Reason, c.agent)
		}
		if d := p.Decide(person, r, c.url); d.Allowed != c.person {
			t.Errorf("person %s: allowed=%v (%s), want %v", c.url, d.Allowed, d.Reason, c.person)
		}
	}
}
