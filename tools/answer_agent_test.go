package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
)

// agentCase is one internal target: the agent must read that it is
// internal and whom to ask, never the allowlist entry that would open it,
// while the recorded refusal (the refusal log's row) keeps that entry.
type agentCase struct {
	name    string
	url     string
	entries []string // the allowlist; none is PUBLIC WEB
	resolve map[string]string
	reason  guard.Reason
	entry   string // the exact remedy entry the admin sees; "" for none
}

var internalTargets = []agentCase{
	{name: "loopback redis", url: "http://127.0.0.1:6379/", reason: guard.ReasonInternalAddress, entry: "127.0.0.1:6379"},
	{name: "private address", url: "http://10.0.0.5:8080/admin", reason: guard.ReasonInternalAddress, entry: "10.0.0.5:8080"},
	{name: "IPv6 loopback", url: "http://[::1]:6379/", reason: guard.ReasonInternalAddress, entry: "[::1]:6379"},
	{name: "localhost", url: "http://localhost:6379/", reason: guard.ReasonInternalName, entry: "localhost:6379"},
	{name: "metadata endpoint", url: "http://169.254.169.254/latest/meta-data/", reason: guard.ReasonMetadata},
	{name: "link-local address", url: "http://169.254.10.1:8080/", reason: guard.ReasonInternalAddress, entry: "169.254.10.1:8080"},
	{name: "name resolving to 10.x", url: "http://wiki.example.com/", resolve: map[string]string{"wiki.example.com": "10.0.0.7"},
		reason: guard.ReasonInternalAddress, entry: "wiki.example.com"},
	{name: "name resolving to 10.x under a wildcard", url: "http://wiki.example.com/", entries: []string{"*.example.com"},
		resolve: map[string]string{"wiki.example.com": "10.0.0.7"}, reason: guard.ReasonInternalAddress, entry: "wiki.example.com"},
	{name: "localhost on another port", url: "http://localhost:6379/", entries: []string{"localhost:8080"},
		reason: guard.ReasonPort, entry: "localhost:6379"},
}

// withoutEcho drops the lines of an answer that only repeat what the agent
// asked for (its URL) or the guard's sentence about the target, which
// name the host but ask nothing of anyone; what remains is the fix.
func withoutEcho(answer string, r *guard.Refusal) string {
	var kept []string
	for _, line := range strings.Split(answer, "\n") {
		if strings.HasPrefix(line, "URL: ") || line == r.Message {
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

// assertNoInvitation fails when text asks for an allowlist entry.
func assertNoInvitation(t *testing.T, where, text, entry string) {
	t.Helper()
	lower := strings.ToLower(text)
	for _, bad := range []string{"allowlist", "literal", "add ", "unlock"} {
		if strings.Contains(lower, bad) {
			t.Errorf("%s invites opening the target (%q):\n%s", where, bad, text)
		}
	}
	if entry != "" && strings.Contains(text, entry) {
		t.Errorf("%s names the entry %s:\n%s", where, entry, text)
	}
}

func TestAgentIsNeverToldTheEntryForAnInternalTarget(t *testing.T) {
	for _, tt := range internalTargets {
		t.Run(tt.name, func(t *testing.T) {
			e := newToolEnv(t)
			for name, addr := range tt.resolve {
				e.resolver.Answer(name, addr)
			}
			if len(tt.entries) > 0 {
				e.set(t, func(*Settings) {}, tt.entries...)
			}
			res := e.call(t, FetchURLName, turnA, fmt.Sprintf(`{"url": %q}`, tt.url))
			if res.OK() || res.Refusal.Reason != tt.reason {
				t.Fatalf("got %+v, want a %s refusal", res.Refusal, tt.reason)
			}

			// The agent's text: MCP's answer and the API's "answer".
			fix := withoutEcho(res.Text, res.Refusal)
			assertNoInvitation(t, "the answer", fix, tt.entry)
			want := guard.AgentInternalFix
			if tt.reason == guard.ReasonMetadata {
				want = guard.AgentMetadataFix
			}
			if !strings.Contains(res.Text, "Fix: "+want) {
				t.Errorf("the answer does not say %q:\n%s", want, res.Text)
			}

			// The API's JSON: its answer is the same text, and its error
			// object carries the agent's fix and no remedy.
			raw, err := json.Marshal(res.API)
			if err != nil {
				t.Fatal(err)
			}
			var api struct {
				Answer string          `json:"answer"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(raw, &api); err != nil {
				t.Fatal(err)
			}
			var apiErr map[string]any
			if err := json.Unmarshal(api.Error, &apiErr); err != nil {
				t.Fatal(err)
			}
			if api.Answer != res.Text || apiErr["fix"] != want || apiErr["reason"] != string(tt.reason) {
				t.Errorf("the API answers %s", raw)
			}
			if _, ok := apiErr["remedy"]; ok {
				t.Errorf("the API's error carries a remedy: %s", api.Error)
			}
			// Beyond the echo of the request (url, host) and the guard's
			// sentence, nothing in the error names the entry.
			for key, v := range apiErr {
				if key == "url" || key == "host" || key == "message" {
					continue
				}
				if tt.entry != "" && strings.Contains(fmt.Sprint(v), tt.entry) {
					t.Errorf("the API's error names the entry %s in %s: %s", tt.entry, key, api.Error)
				}
			}

			// The refusal log's row keeps the exact entry for the admin.
			reps := e.Reports()
			if len(reps) != 1 {
				t.Fatalf("%d refusals recorded, want 1", len(reps))
			}
			kept := reps[0].Refusal
			if kept.Fix == want || kept.Remedy.Entry != tt.entry {
				t.Errorf("the recorded refusal lost the admin's fix: fix %q, remedy %+v, want entry %q", kept.Fix, kept.Remedy, tt.entry)
			}
			if tt.entry != "" && (kept.Remedy.Kind != guard.RemedyAddEntry || !strings.Contains(kept.Fix, tt.entry)) {
				t.Errorf("the recorded fix %q does not name %s", kept.Fix, tt.entry)
			}
			if d := e.dialer.Dials(); len(d) != 0 {
				t.Errorf("dialled %v", d)
			}
		})
	}
}

func TestAgentIsToldThePublicEntryThatIsNotAllowlisted(t *testing.T) {
	e := newToolEnv(t)
	e.set(t, func(*Settings) {}, "status.example.com")
	res := e.call(t, FetchURLName, turnA, `{"url": "https://news.example.org/today"}`)
	if res.OK() || res.Refusal.Reason != guard.ReasonNotAllowlisted {
		t.Fatalf("got %+v", res.Refusal)
	}
	for _, want := range []string{"Fix: " + res.Refusal.Fix, "An admin can help: add the allowlist entry news.example.org."} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the answer lacks %q:\n%s", want, res.Text)
		}
	}
	raw, _ := json.Marshal(res.API)
	if !strings.Contains(string(raw), `"remedy":{"kind":"add_entry","entry":"news.example.org"}`) {
		t.Errorf("the API's error lost the public remedy: %s", raw)
	}
}

func TestMCPAgentReadsTheSameAgentFixAsTheAPI(t *testing.T) {
	e := statusPageEnv(t)
	cs := connectMCP(t, e.reg.MCPServer("test", "local"), nil)
	for _, u := range []string{"http://127.0.0.1:6379/", "http://localhost:6379/", "http://169.254.169.254/"} {
		res := e.call(t, FetchURLName, turnA, fmt.Sprintf(`{"url": %q}`, u))
		text := textOf(t, callFetch(t, cs, map[string]any{"url": u}))
		if text != res.Text {
			t.Fatalf("%s: MCP says\n%s\nthe registry's answer is\n%s", u, text, res.Text)
		}
		assertNoInvitation(t, "MCP's answer", withoutEcho(text, res.Refusal), "")
	}
}
