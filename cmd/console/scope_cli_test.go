package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The CLI says when a change switches a scope's mode, as the browser does.
func TestAllowAddSaysWhenItLeavesPublicWeb(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "allow", "add", "--db", db, "10.0.0.5")
	if r.code != 0 || !strings.Contains(r.stdout, "1 ALLOWED") || !strings.Contains(r.stdout, "now reach only the listed hosts") {
		t.Fatalf("allow add of the first entry: %+v", r)
	}
	r = runCLI(t, "allow", "rm", "--db", db, "10.0.0.5")
	if r.code != 0 || !strings.Contains(r.stdout, "PUBLIC WEB") || !strings.Contains(r.stdout, "reach the public web again") {
		t.Fatalf("allow rm of the last entry: %+v", r)
	}
}

func TestInternalHostForOneIntegrationFromTheCLI(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "allow", "add", "--db", db, "--internal", "--tool", "call_integration", "crm.intranet.corp:8443")
	if r.code != 0 || !strings.Contains(r.stdout, "PUBLIC WEB · 1 INTERNAL") || strings.Contains(r.stdout, "only the listed hosts") {
		t.Fatalf("allow add --internal: %+v", r)
	}
	if r := runCLI(t, "allow", "list", "--db", db); !strings.HasPrefix(r.stdout, "PUBLIC WEB\n") || !strings.Contains(r.stdout, "tool call_integration") || !strings.Contains(r.stdout, "internal") {
		t.Fatalf("allow list: %+v", r)
	}
	// The default scope (fetch_url of any agent) still may not reach it.
	r = runCLI(t, "check", "--db", db, "--agent", "bot", "--tool", "fetch_url", "https://crm.intranet.corp:8443/")
	if r.code != 3 || !strings.Contains(r.stdout, "refused") {
		t.Fatalf("fetch_url reached the internal host: %+v", r)
	}
	r = runCLI(t, "check", "--db", db, "--json", "--agent", "bot", "--tool", "call_integration")
	var eff effectiveJSON
	if err := json.Unmarshal([]byte(r.stdout), &eff); err != nil || !eff.PublicWeb || eff.Badge != "PUBLIC WEB · 1 INTERNAL" || len(eff.Entries) != 1 || !eff.Entries[0].Internal {
		t.Fatalf("check --agent --tool --json: %v %+v", err, r)
	}
	// A wildcard is never an internal host; an unknown tool is named.
	if r := runCLI(t, "allow", "add", "--db", db, "--internal", "*.intranet.corp"); r.code == 0 || !strings.Contains(r.stderr, "not a wildcard") {
		t.Fatalf("an internal wildcard: %+v", r)
	}
	if r := runCLI(t, "allow", "add", "--db", db, "--tool", "fetch_uri", "status.example.com"); r.code == 0 || !strings.Contains(r.stderr, `--tool "fetch_uri"`) {
		t.Fatalf("an unknown tool: %+v", r)
	}
}

func TestReportOnlyEntryFromTheCLI(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "allow", "add", "--db", db, "--report-only", "--agent", "bot", "status.example.com")
	if r.code != 0 || !strings.Contains(r.stdout, "1 REPORT-ONLY") || !strings.Contains(r.stdout, "report-only") {
		t.Fatalf("allow add --report-only: %+v", r)
	}
	r = runCLI(t, "allow", "enforce", "--db", db, "--agent", "bot", "status.example.com")
	if r.code != 0 || !strings.Contains(r.stdout, "enforced status.example.com") || !strings.Contains(r.stdout, "1 ALLOWED for agent bot") {
		t.Fatalf("allow enforce: %+v", r)
	}
	if got := strings.Join(auditActions(t, db), "\n"); !strings.Contains(got, "allowlist.enforce status.example.com for agent bot") {
		t.Fatalf("audit: %v", got)
	}
}
