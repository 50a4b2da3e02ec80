package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/tools"
)

// TestUserGuideCoversEveryRefusalAndSetting keeps the guide in step with
// the code: every refusal reason and code, and every setting key, appears
// in docs/USER-GUIDE.md.
func TestUserGuideCoversEveryRefusalAndSetting(t *testing.T) {
	raw, err := os.ReadFile("../../docs/USER-GUIDE.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(raw)
	// Both lists: the guard's reasons and the tools' own.
	for _, r := range append(slices.Clone(guard.Reasons), tools.Reasons...) {
		if !strings.Contains(guide, "| `"+string(r)+"` |") {
			t.Errorf("the user guide's reason tables do not document the refusal reason %q", r)
		}
	}
	for _, c := range guard.Codes {
		if !strings.Contains(guide, "`"+string(c)+"`") {
			t.Errorf("the user guide does not document the code %q", c)
		}
	}
	for _, d := range tools.SettingDefs {
		if !strings.Contains(guide, "| `"+d.Key+"` |") {
			t.Errorf("the user guide's settings table lacks %q", d.Key)
		}
	}
	for cmd := range commands {
		if !strings.Contains(guide, "console "+cmd) {
			t.Errorf("the user guide does not mention `console %s`", cmd)
		}
	}
}
