package tools

import (
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
)

// A network failure is the same typed refusal value end to end, but the
// agent reads it as what it is: the host could not be reached. A policy
// refusal still reads as a refusal.
func TestRefusalAnswerWordsNetworkFailures(t *testing.T) {
	unreachable := &guard.Refusal{Code: guard.CodeUnreachable, Reason: guard.ReasonConnect, Kind: guard.KindNetwork,
		URL: "https://status.example.com/", Host: "status.example.com", Message: "Could not connect to status.example.com: connection refused.", Fix: "Try again later."}
	ans := RefusalAnswer(FetchURLName, unreachable)
	if !strings.HasPrefix(ans, "fetch_url could not reach status.example.com: unreachable (connect).\n") || strings.Contains(ans, "was refused") {
		t.Errorf("network failure answer:\n%s", ans)
	}
	if unreachable.Code != guard.CodeUnreachable || unreachable.Reason != guard.ReasonConnect {
		t.Errorf("the typed value changed: %+v", unreachable)
	}
	noHost := &guard.Refusal{Code: guard.CodeTimeout, Reason: guard.ReasonTimeout, Kind: guard.KindNetwork, URL: "https://x.example/", Message: "m", Fix: "f"}
	if ans := RefusalAnswer(FetchURLName, noHost); !strings.HasPrefix(ans, "fetch_url could not reach https://x.example/: timeout (timeout).") {
		t.Errorf("without a host the URL is named:\n%s", ans)
	}
	policy := &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, URL: "https://x.example/", Host: "x.example", Message: "m", Fix: "f"}
	if ans := RefusalAnswer(FetchURLName, policy); !strings.HasPrefix(ans, "fetch_url was refused: forbidden (not_allowlisted).") {
		t.Errorf("policy refusal answer:\n%s", ans)
	}
}
