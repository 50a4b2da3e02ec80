package tools

import (
	"strings"
	"testing"

	"github.com/outboundhq/outbound/tools/browser"
)

// TestAMissingBrowserGivesTheModelNoSetUpAdvice: when Chromium or the
// driver is missing, the agent reads that the browser is not available
// and that an admin can run console doctor, never paths, packages or
// commands to install; the refusal log has it under the tool.
func TestAMissingBrowserGivesTheModelNoSetUpAdvice(t *testing.T) {
	missing := &browser.MissingError{What: "Chromium", Looked: []string{"/usr/bin/chromium (from the default)"},
		Fix: "install it with `apt-get install chromium` or set OUTBOUND_CHROMIUM to a Chromium binary"}
	e := newShotEnv(t, func() (ShotBrowser, func() error, error) { return nil, nil, missing }, "93.184.216.34")
	res := e.call(t, Turn{Agent: "a"}, `{"url": "http://93.184.216.34/"}`)
	if res.OK() || res.Refusal.Reason != ReasonBrowser || e.launches.Load() != 1 {
		t.Fatalf("%+v", res.Refusal)
	}
	if !strings.Contains(res.Text, "The browser is not available here.") || !strings.Contains(res.Text, "console doctor") {
		t.Fatalf("answer %q", res.Text)
	}
	for _, advice := range []string{"apt-get", "chromium", "PLAYWRIGHT", "OUTBOUND_", "scripts/test.sh", "/usr/bin", "node"} {
		if strings.Contains(strings.ToLower(res.Text), strings.ToLower(advice)) {
			t.Errorf("the agent reads set-up advice %q: %q", advice, res.Text)
		}
	}
	if reps := e.Reports(); len(reps) != 1 || reps[0].Caller.Tool != TakeScreenshotName || reps[0].Refusal.Reason != ReasonBrowser {
		t.Fatalf("refusal log: %+v", reps)
	}
}
