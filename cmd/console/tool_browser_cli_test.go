package main

import (
	"strings"
	"testing"

	"github.com/outboundhq/outbound/internal/browsertest"
)

// console tool serves the browser tools too: while the setting is off it
// answers why, and once on, browser_open of the metadata address is
// refused like every tool's, and no page is open for a second command.
func TestToolCommandServesTheBrowserTools(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "tool", "--db", db, "browser_open", `{"url": "https://status.example.com/"}`)
	if r.code != 3 || !strings.Contains(r.stdout, "browser_off") {
		t.Fatalf("browser_open while the setting is off: %+v", r)
	}
	if r := runCLI(t, "settings", "set", "--db", db, "browser", "confirm"); r.code != 0 {
		t.Fatalf("settings set browser confirm: %+v", r)
	}
	browsertest.Require(t)
	r = runCLI(t, "tool", "--db", db, "browser_open", `{"url": "http://169.254.169.254/latest/meta-data/"}`)
	if r.code != 3 || !strings.Contains(r.stdout, "(metadata)") {
		t.Fatalf("browser_open of the metadata address: %+v", r)
	}
	r = runCLI(t, "tool", "--db", db, "browser_read", `{}`)
	if r.code != 3 || !strings.Contains(r.stdout, "no_tab") {
		t.Fatalf("browser_read in a new command: %+v", r)
	}
}
