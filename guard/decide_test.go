package guard

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
)

// TestRefusedTargetsAreNeverDialled sends each target through the guarded
// client and asserts on the recording fakes, not on messages: no dial
// happened, and names refused by their form were never even resolved.
func TestRefusedTargetsAreNeverDialled(t *testing.T) {
	tests := []struct {
		url      string
		code     Code
		reason   Reason
		resolves bool // the refusal needs the resolver's answer
	}{
		{"http://localhost/", CodeForbidden, ReasonInternalName, false},
		{"http://LOCALHOST./admin", CodeForbidden, ReasonInternalName, false},
		{"http://api.localhost/", CodeForbidden, ReasonInternalName, false},
		{"http://127.0.0.1/", CodeForbidden, ReasonInternalAddress, false},
		{"http://2130706433/", CodeInvalid, ReasonNumericHost, false},
		{"http://0x7f000001/", CodeInvalid, ReasonNumericHost, false},
		{"http://0177.0.0.1/", CodeInvalid, ReasonNumericHost, false},
		{"http://127.1/", CodeInvalid, ReasonNumericHost, false},
		{"http://１２７.０.０.１/", CodeForbidden, ReasonInternalAddress, false}, // full-width digits map to 127.0.0.1
		{"http://２１３０７０６４３３/", CodeInvalid, ReasonNumericHost, false},
		{"http://%31%32%37.0.0.1/", CodeInvalid, ReasonBadURL, false},
		{"http://10.0.0.5/", CodeForbidden, ReasonInternalAddress, false},
		{"http://172.16.0.1/", CodeForbidden, ReasonInternalAddress, false},
		{"http://192.168.1.1/", CodeForbidden, ReasonInternalAddress, false},
		{"http://100.64.0.1/", CodeForbidden, ReasonInternalAddress, false},
		{"http://169.254.169.254/latest/meta-data/", CodeForbidden, ReasonMetadata, false},
		{"http://168.63.129.16/", CodeForbidden, ReasonMetadata, false},
		{"http://[fd00:ec2::254]/", CodeForbidden, ReasonMetadata, false},
		{"http://[::1]/", CodeForbidden, ReasonInternalAddress, false},
		{"http://[::ffff:127.0.0.1]/", CodeForbidden, ReasonInternalAddress, false},
		{"http://[::ffff:8.8.8.8]/", CodeForbidden, ReasonInternalAddress, false},
		{"http://[fe80::1%25eth0]/", CodeInvalid, ReasonZone, false},
		{"http://[64:ff9b::7f00:1]/", CodeForbidden, ReasonInternalAddress, false},
		{"http://metadata.google.internal/computeMetadata/v1/", CodeForbidden, ReasonMetadata, false},
		{"http://metadata/", CodeForbidden, ReasonMetadata, false},
		{"http://db.internal/", CodeForbidden, ReasonInternalName, false},
		{"http://printer.local/", CodeForbidden, ReasonInternalName, false},
		{"http://router.home.arpa/", CodeForbidden, ReasonInternalName, false},
		{"http://intranet/", CodeForbidden, ReasonInternalName, false},
		{"http://private.example.com/", CodeForbidden, ReasonInternalAddress, true},
		{"http://mixed.example.com/", CodeForbidden, ReasonInternalAddress, true},
		{"http://mapped.example.com/", CodeForbidden, ReasonInternalAddress, true},
		{"http://nxdomain.example.com/", CodeUnreachable, ReasonDNS, true},
		{"http://public.example.com:8080/", CodeForbidden, ReasonPort, false},
		{"http://localhost:6379/", CodeForbidden, ReasonInternalName, false},
		{"ftp://public.example.com/", CodeInvalid, ReasonScheme, false},
		{"file:///etc/passwd", CodeInvalid, ReasonScheme, false},
		{"gopher://public.example.com/", CodeInvalid, ReasonScheme, false},
		{"http://user:pw@public.example.com/", CodeInvalid, ReasonCredentials, false},
		{"http:///path", CodeInvalid, ReasonEmptyHost, false},
		{"http://exa_mple.com/", CodeInvalid, ReasonBadHost, false},
		{"http://public.example.com:99999/", CodeInvalid, ReasonBadPort, false},
		{"http:public.example.com", CodeInvalid, ReasonBadURL, false},
		{"public.example.com/path", CodeInvalid, ReasonScheme, false},
		{"http://[::1", CodeInvalid, ReasonBadURL, false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			r := newResolver(
				"public.example.com", []string{"93.184.216.34"},
				"private.example.com", []string{"10.0.0.7"},
				"mixed.example.com", []string{"93.184.216.34", "192.168.0.10"},
				"mapped.example.com", []string{"::ffff:127.0.0.1"},
			)
			g := newTestGuard(t, nil, r)
			resp, err := g.Get(context.Background(), tt.url)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("Get(%q) succeeded; want %s/%s", tt.url, tt.code, tt.reason)
			}
			ref, ok := AsRefusal(err)
			if !ok {
				t.Fatalf("Get(%q) error %v is not a *Refusal", tt.url, err)
			}
			if ref.Code != tt.code || ref.Reason != tt.reason {
				t.Fatalf("Get(%q) = %s/%s (%s), want %s/%s", tt.url, ref.Code, ref.Reason, ref.Message, tt.code, tt.reason)
			}
			if ref.Message == "" || ref.Fix == "" || !strings.HasSuffix(ref.Message, ".") {
				t.Fatalf("refusal must carry a sentence and a fix: %+v", ref)
			}
			if dials := g.dialer.Dials(); len(dials) != 0 {
				t.Fatalf("Get(%q) dialled %v", tt.url, dials)
			}
			if lookups := g.resolver.Lookups(); !tt.resolves && len(lookups) != 0 {
				t.Fatalf("Get(%q) resolved %v before refusing", tt.url, lookups)
			}
			events := g.reports.Events()
			if len(events) != 1 || events[0].Refusal.Reason != tt.reason {
				t.Fatalf("want exactly one reported refusal, got %+v", events)
			}
		})
	}
}

func TestDecideAllowlist(t *testing.T) {
	r := newResolver(
		"status.example.com", []string{"93.184.216.34"},
		"intranet.corp", []string{"10.1.2.3"},
		"api.docs.example.com", []string{"93.184.216.35"},
		"docs.example.com", []string{"93.184.216.36"},
		"private.docs.example.com", []string{"10.9.9.9"},
		"linklocal.corp", []string{"169.254.10.10"},
		"other.example.com", []string{"93.184.216.37"},
		"localhost", []string{"127.0.0.1"},
		"wiki.internal", []string{"10.4.4.4"},
		"metadata.google.internal", []string{"169.254.169.254"},
	)
	p := mustPolicy(t, DefaultSettings(),
		"status.example.com", "*.docs.example.com", "intranet.corp:8080", "linklocal.corp",
		"169.254.169.254", "[fd00::5]:8443", "localhost:5000", "wiki.internal", "metadata.google.internal", "10.1.2.4")
	tests := []struct {
		url    string
		allow  bool
		reason Reason
		entry  string
	}{
		{"https://status.example.com/incident/42", true, "", "status.example.com"},
		{"http://STATUS.example.com./", true, "", "status.example.com"},
		{"https://status.example.com:8443/", false, ReasonPort, ""},
		{"https://other.example.com/", false, ReasonNotAllowlisted, ""},
		{"https://docs.example.com/", true, "", "*.docs.example.com"},
		{"https://api.docs.example.com/v1", true, "", "*.docs.example.com"},
		{"https://private.docs.example.com/", false, ReasonInternalAddress, "*.docs.example.com"}, // wildcard never unlocks
		{"http://intranet.corp:8080/", true, "", "intranet.corp:8080"},                            // literal unlocks private
		{"http://intranet.corp/", false, ReasonPort, ""},                                          // pinned to 8080
		{"http://linklocal.corp/", false, ReasonInternalAddress, "linklocal.corp"},                // link-local needs an IP entry
		{"http://169.254.169.254/latest/", true, "", "169.254.169.254"},                           // a literal IP entry does
		{"https://[fd00::5]:8443/", true, "", "[fd00::5]:8443"},
		{"http://localhost:5000/", true, "", "localhost:5000"},
		{"http://wiki.internal/", true, "", "wiki.internal"},
		{"http://metadata.google.internal/", false, ReasonMetadata, "metadata.google.internal"}, // names never unlock metadata
		{"http://10.1.2.4/", true, "", "10.1.2.4"},
		{"http://10.1.2.5/", false, ReasonInternalAddress, ""}, // what it is, not that it is unlisted
		{"http://93.184.216.99/", false, ReasonNotAllowlisted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			d := p.Decide(context.Background(), r, tt.url)
			if d.Allowed != tt.allow || d.Reason != tt.reason {
				t.Fatalf("Decide(%q) = allowed %v %s (%s), want %v %s", tt.url, d.Allowed, d.Reason, d.Message, tt.allow, tt.reason)
			}
			if tt.entry != "" && d.Entry.String() != tt.entry {
				t.Fatalf("Decide(%q) matched %q, want %q", tt.url, d.Entry, tt.entry)
			}
		})
	}
}

// consoleWording is a product's wording, as a console passes it in.
var consoleWording = Wording{
	Allowlist: "under Integrations → Outbound web access",
	Setting: func(key string) string {
		if key == SettingPorts {
			return "Settings → Allowed ports (ports)"
		}
		return ""
	},
}

func TestDecideFixAndRemedyNameTheSetting(t *testing.T) {
	r := newResolver("intranet.corp", []string{"10.1.2.3"}, "status.example.com", []string{"93.184.216.34"}, "x.docs.example.com", []string{"10.0.0.1"})
	tests := []struct {
		name, url       string
		entries         []string
		neutral, worded string
		remedy          Remedy
	}{
		{"not listed", "http://intranet.corp:8080/", []string{"status.example.com"},
			"Add intranet.corp:8080 to the allowlist.", "Add intranet.corp:8080 under Integrations → Outbound web access.", AddEntry("intranet.corp:8080")},
		{"literal needed", "http://intranet.corp/", nil,
			"add intranet.corp as an internal host to the allowlist; that keeps the public web open", "add intranet.corp as an internal host under Integrations → Outbound web access", AddInternal("intranet.corp")},
		{"wildcard", "http://x.docs.example.com/", []string{"*.docs.example.com"},
			"The wildcard *.docs.example.com never unlocks internal addresses; add x.docs.example.com as a literal entry to the allowlist",
			"add x.docs.example.com as a literal entry under Integrations → Outbound web access", AddEntry("x.docs.example.com")},
		{"port", "http://status.example.com:8080/", nil,
			"Open port 8080 in the ports setting, or add status.example.com:8080 as an internal host to the allowlist,",
			"Open port 8080 in Settings → Allowed ports (ports), or add status.example.com:8080 as an internal host under Integrations → Outbound web access,", AddInternal("status.example.com:8080")},
		{"metadata", "http://169.254.169.254/", nil,
			"to the allowlist unlocks it", "under Integrations → Outbound web access unlocks it", Remedy{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPolicy(t, DefaultSettings(), tt.entries...)
			d := p.Decide(context.Background(), r, tt.url)
			if d.Allowed || !strings.Contains(d.Fix, tt.neutral) {
				t.Fatalf("neutral Fix = %q, want it to contain %q", d.Fix, tt.neutral)
			}
			if strings.Contains(d.Fix, "→") {
				t.Errorf("neutral Fix = %q names a product's menu", d.Fix)
			}
			if d.Remedy != tt.remedy || d.Refusal().Remedy != tt.remedy {
				t.Errorf("Remedy = %+v, want %+v", d.Remedy, tt.remedy)
			}
			w := p.WithWording(consoleWording).Decide(context.Background(), r, tt.url)
			if !strings.Contains(w.Fix, tt.worded) {
				t.Fatalf("worded Fix = %q, want it to contain %q", w.Fix, tt.worded)
			}
			if w.Remedy != tt.remedy {
				t.Errorf("worded Remedy = %+v, want %+v: wording never changes the remedy", w.Remedy, tt.remedy)
			}
		})
	}
}

func TestGuardAppliesItsWordingToEveryPolicy(t *testing.T) {
	r := newResolver("intranet.corp", []string{"10.1.2.3"})
	g := New(Options{Resolver: r, Wording: consoleWording})
	want := "under Integrations → Outbound web access"
	if d := g.Decide(context.Background(), "http://intranet.corp/"); !strings.Contains(d.Fix, want) {
		t.Fatalf("initial policy: Fix = %q, want %q", d.Fix, want)
	}
	p := mustPolicy(t, DefaultSettings(), "status.example.com")
	g.SetPolicy(p)
	if d := g.Decide(context.Background(), "http://intranet.corp/"); !strings.Contains(d.Fix, want) {
		t.Fatalf("after SetPolicy: Fix = %q, want %q", d.Fix, want)
	}
	if d := p.Decide(context.Background(), r, "http://intranet.corp/"); strings.Contains(d.Fix, "→") {
		t.Fatalf("SetPolicy changed the caller's policy: its Fix = %q", d.Fix)
	}
}

func TestNetworkFailuresAreOfKindNetwork(t *testing.T) {
	r := newResolver("status.example.com", []string{"93.184.216.34"})
	d := mustPolicy(t, DefaultSettings()).Decide(context.Background(), r, "http://nowhere.example.com/")
	if d.Allowed || d.Reason != ReasonDNS || d.Refusal().KindOf() != KindNetwork || d.Remedy.Kind != RemedyNone {
		t.Fatalf("dns failure: reason %q kind %q remedy %+v, want dns, network, none", d.Reason, d.Refusal().KindOf(), d.Remedy)
	}
	d = mustPolicy(t, DefaultSettings(), "status.example.com").Decide(context.Background(), r, "http://intranet.corp/")
	if d.Refusal().KindOf() != KindPolicy {
		t.Fatalf("not allowlisted: kind %q, want policy", d.Refusal().KindOf())
	}
}

func TestExtraPortsOpenAPort(t *testing.T) {
	r := newResolver("public.example.com", []string{"93.184.216.34"})
	s := DefaultSettings()
	if d := mustPolicy(t, s).Decide(context.Background(), r, "http://public.example.com:8080/"); d.Allowed {
		t.Fatal("port 8080 allowed without being listed")
	}
	s.ExtraPorts = []uint16{8080}
	if d := mustPolicy(t, s).Decide(context.Background(), r, "http://public.example.com:8080/"); !d.Allowed {
		t.Fatalf("port 8080 refused although listed: %s", d.Message)
	}
}

func TestDecisionJSON(t *testing.T) {
	r := newResolver("mixed.example.com", []string{"93.184.216.34", "10.0.0.1"})
	d := mustPolicy(t, DefaultSettings()).Decide(context.Background(), r, "http://Mixed.Example.com/x")
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"url", "allowed", "code", "reason", "message", "fix", "addresses"} {
		if _, ok := got[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if got["url"] != "http://mixed.example.com/x" || got["code"] != "forbidden" {
		t.Fatalf("JSON = %s", b)
	}
	if addrs := got["addresses"].([]any); len(addrs) != 2 || addrs[1] != "10.0.0.1" {
		t.Fatalf("addresses = %v", addrs)
	}
}

func TestDecideNormalisesHostInPlace(t *testing.T) {
	r := newResolver("xn--bcher-kva.example", []string{"93.184.216.34"})
	d := mustPolicy(t, DefaultSettings()).Decide(context.Background(), r, "https://BÜCHER.example./a?b=c")
	if !d.Allowed || d.URL.Host != "xn--bcher-kva.example" || d.URL.String() != "https://xn--bcher-kva.example/a?b=c" {
		t.Fatalf("got %v %q %q", d.Allowed, d.URL.Host, d.URL)
	}
	if got := d.Addresses(); len(got) != 1 || got[0] != netip.MustParseAddr("93.184.216.34") {
		t.Fatalf("Addresses = %v", got)
	}
}
