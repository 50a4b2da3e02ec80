package tools

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
)

func TestToolReasonsAreNotTheGuards(t *testing.T) {
	for _, r := range Reasons {
		if slices.Contains(guard.Reasons, r) {
			t.Errorf("tool reason %q is also in guard.Reasons; the guard lists only its own", r)
		}
	}
	seen := map[guard.Reason]bool{}
	for _, r := range append(slices.Clone(guard.Reasons), Reasons...) {
		if seen[r] {
			t.Errorf("reason %q is listed twice", r)
		}
		seen[r] = true
	}
}

func TestRefusalAnswerShowsTheTypedValue(t *testing.T) {
	r := &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, URL: "http://intranet.corp:8080/x",
		Message: "intranet.corp is not on the outbound allowlist.", Fix: "Add intranet.corp:8080 to the allowlist.",
		Remedy: guard.AddEntry("intranet.corp:8080"), Redirects: []string{"http://a.example/", "http://b.example/"},
		Addresses: []netip.Addr{netip.MustParseAddr("93.184.216.34")}}
	ans := RefusalAnswer("fetch_url", r)
	for _, want := range []string{
		"fetch_url was refused: forbidden (not_allowlisted).",
		"Redirected from http://a.example/ to http://intranet.corp:8080/x, through http://b.example/.",
		"Fix: Add intranet.corp:8080 to the allowlist.",
		"An admin can help: add the allowlist entry intranet.corp:8080.",
	} {
		if !strings.Contains(ans, want) {
			t.Errorf("answer lacks %q:\n%s", want, ans)
		}
	}
	if strings.Contains(ans, "network failure") {
		t.Errorf("a policy refusal reads as a network failure:\n%s", ans)
	}

	n := &guard.Refusal{Code: guard.CodeUnreachable, Reason: guard.ReasonDNS, Kind: guard.KindNetwork, Message: "m.", Fix: "f."}
	ans = RefusalAnswer("fetch_url", n)
	if !strings.Contains(ans, "network failure") || strings.Contains(ans, "An admin can help") {
		t.Errorf("network failure without remedy rendered as:\n%s", ans)
	}
}
