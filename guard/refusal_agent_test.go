package guard

import (
	"net/netip"
	"testing"
)

func TestRefusalForAgentHidesTheEntryOfAnInternalTarget(t *testing.T) {
	addrs := func(s ...string) []netip.Addr {
		var out []netip.Addr
		for _, a := range s {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
	tests := []struct {
		name     string
		r        Refusal
		internal bool
		agentFix string
	}{
		{"loopback address", Refusal{Reason: ReasonInternalAddress, Fix: "add 127.0.0.1:6379", Remedy: AddEntry("127.0.0.1:6379")}, true, AgentInternalFix},
		{"internal name", Refusal{Reason: ReasonInternalName, Fix: "add localhost:6379", Remedy: AddEntry("localhost:6379")}, true, AgentInternalFix},
		{"metadata, no remedy", Refusal{Reason: ReasonMetadata, Fix: "Only adding the literal IP entry 169.254.169.254 unlocks it"}, true, AgentMetadataFix},
		{"connect-time check", Refusal{Reason: ReasonConnectCheck, Fix: "add x.example.com", Remedy: AddEntry("x.example.com"), Addresses: addrs("127.0.0.1")}, true, AgentInternalFix},
		{"port of an internal name", Refusal{Reason: ReasonPort, Fix: "Add localhost:6379", Remedy: AddEntry("localhost:6379")}, true, AgentInternalFix},
		{"port of a private address", Refusal{Reason: ReasonPort, Fix: "Add 10.0.0.5:8443", Remedy: AddEntry("10.0.0.5:8443")}, true, AgentInternalFix},
		{"unlisted name seen at a private address", Refusal{Reason: ReasonNotAllowlisted, Fix: "Add wiki.example.com", Remedy: AddEntry("wiki.example.com"), Addresses: addrs("10.0.0.7")}, true, AgentInternalFix},
		{"unparseable entry", Refusal{Reason: ReasonNotAllowlisted, Fix: "Add it", Remedy: AddEntry("not an entry")}, true, AgentInternalFix},
		{"public name not allowlisted", Refusal{Reason: ReasonNotAllowlisted, Fix: "Add news.example.org", Remedy: AddEntry("news.example.org")}, false, "Add news.example.org"},
		{"public address on a closed port", Refusal{Reason: ReasonPort, Fix: "Add 93.184.216.34:8080", Remedy: AddEntry("93.184.216.34:8080"), Addresses: addrs("93.184.216.34")}, false, "Add 93.184.216.34:8080"},
		{"setting of an allowed internal host", Refusal{Reason: ReasonDeclaredSize, Fix: "Raise max_bytes", Remedy: ChangeSetting(SettingMaxBytes), Addresses: addrs("10.0.0.5")}, false, "Raise max_bytes"},
		{"network failure", Refusal{Reason: ReasonDNS, Fix: "Check the host name for typos."}, false, "Check the host name for typos."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			before := r
			if got := r.Internal(); got != tt.internal {
				t.Errorf("Internal() = %v, want %v", got, tt.internal)
			}
			if got := r.AgentFix(); got != tt.agentFix {
				t.Errorf("AgentFix() = %q, want %q", got, tt.agentFix)
			}
			a := r.ForAgent()
			if a.Fix != tt.agentFix {
				t.Errorf("ForAgent().Fix = %q, want %q", a.Fix, tt.agentFix)
			}
			if tt.internal && a.Remedy != (Remedy{}) {
				t.Errorf("ForAgent() keeps the remedy %+v", a.Remedy)
			}
			if !tt.internal && (a != &r || a.Remedy != tt.r.Remedy) {
				t.Errorf("ForAgent() changed a public refusal: %+v", a)
			}
			if r.Fix != before.Fix || r.Remedy != before.Remedy {
				t.Errorf("ForAgent() changed the refusal itself: %+v", r)
			}
		})
	}
	var none *Refusal
	if none.ForAgent() != nil {
		t.Error("a nil refusal is not nil for the agent")
	}
}
