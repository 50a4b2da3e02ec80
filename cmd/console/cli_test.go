package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), env{strings.NewReader(""), &out, &errOut}, args)
	return result{code, out.String(), errOut.String()}
}

// tempDB is a path where no database exists yet.
func tempDB(t testing.TB) string { return filepath.Join(t.TempDir(), "console.db") }

// existingDB is a fresh, empty database, as the first `console serve`
// leaves it, for read-only commands, which refuse a missing file.
func existingDB(t testing.TB) string {
	t.Helper()
	db := tempDB(t)
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestCheckExitCodesAndJSON(t *testing.T) {
	db := existingDB(t)
	if r := runCLI(t, "check", "--db", db, "http://93.184.216.34/status"); r.code != 0 || !strings.Contains(r.stdout, "allowed  http://93.184.216.34/status") || !strings.Contains(r.stdout, "PUBLIC WEB") {
		t.Fatalf("allowed check: %+v", r)
	}
	r := runCLI(t, "check", "--json", "--db", db, "http://169.254.169.254/latest/meta-data/")
	if r.code != 3 {
		t.Fatalf("refused check exit %d, want 3: %+v", r.code, r)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"url", "allowed", "code", "reason", "message", "fix", "addresses"} {
		if _, ok := got[k]; !ok {
			t.Errorf("--json lacks %q", k)
		}
	}
	if got["allowed"] != false || got["code"] != "forbidden" || got["reason"] != "metadata" {
		t.Fatalf("decision JSON: %s", r.stdout)
	}
	if r := runCLI(t, "check", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "give exactly one URL") {
		t.Fatalf("no URL: %+v", r)
	}
	if r := runCLI(t, "check", "--bogus", "--db", db, "http://x/"); r.code != 2 || !strings.Contains(r.stderr, "--bogus is not a flag of console check") {
		t.Fatalf("bad flag: %+v", r)
	}
	if r := runCLI(t, "nonsense"); r.code != 2 || !strings.Contains(r.stderr, `unknown command "nonsense"`) {
		t.Fatalf("unknown command: %+v", r)
	}
}

func TestAllowAddListRemove(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "allow", "add", "Status.Example.com", "intranet.corp:8080", "--note", "ticket 42", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "added status.example.com") || !strings.Contains(r.stdout, "2 ALLOWED") {
		t.Fatalf("allow add: %+v", r)
	}
	r = runCLI(t, "allow", "add", "--db", db, "ok.example.com", "https://bad.example.com/", "*.com", "status.example.com")
	if r.code != 2 || !strings.Contains(r.stderr, "nothing was added") || !strings.Contains(r.stderr, "has a scheme") ||
		!strings.Contains(r.stderr, "covers a public suffix") || strings.Contains(r.stdout, "added ok.example.com") {
		t.Fatalf("bad allow add: %+v", r)
	}
	r = runCLI(t, "allow", "list", "--json", "--db", db)
	var entries []entryJSON
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil || len(entries) != 2 {
		t.Fatalf("allow list --json: %v %s", err, r.stdout)
	}
	if entries[0].Entry != "intranet.corp:8080" || entries[0].Note != "ticket 42" || !strings.HasPrefix(entries[0].AddedBy, "cli") {
		t.Fatalf("entries: %+v", entries)
	}
	if r := runCLI(t, "check", "--db", db, "http://93.184.216.34/"); r.code != 3 || !strings.Contains(r.stdout, "not on the outbound allowlist") {
		t.Fatalf("check under an allowlist: %+v", r)
	}
	if r := runCLI(t, "allow", "rm", "--db", db, "nothere.example.com"); r.code != 2 || !strings.Contains(r.stderr, "nothing was removed") {
		t.Fatalf("rm unknown: %+v", r)
	}
	if r := runCLI(t, "allow", "rm", "--db", db, "STATUS.example.com", "intranet.corp:8080"); r.code != 0 || !strings.Contains(r.stdout, "PUBLIC WEB") {
		t.Fatalf("rm: %+v", r)
	}
	if r := runCLI(t, "allow", "list", "--db", db); r.code != 0 || !strings.HasPrefix(r.stdout, "PUBLIC WEB") {
		t.Fatalf("list after rm: %+v", r)
	}
}

func TestSettingsSetAndList(t *testing.T) {
	db := existingDB(t)
	if r := runCLI(t, "settings", "set", "timeout", "fast", "--db", db); r.code != 2 || !strings.Contains(r.stderr, `"fast" is not a duration; write it like 15s`) || !strings.Contains(r.stderr, "nothing was changed") {
		t.Fatalf("bad value: %+v", r)
	}
	if r := runCLI(t, "settings", "set", "--db", db, "ports", "8443,8080"); r.code != 0 || r.stdout != "ports = 8080, 8443\n" {
		t.Fatalf("set ports: %+v", r)
	}
	r := runCLI(t, "settings", "list", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "ports") || !strings.Contains(r.stdout, "8080, 8443") || !strings.Contains(r.stdout, "max_bytes") {
		t.Fatalf("settings list: %+v", r)
	}
	if r := runCLI(t, "check", "--db", db, "http://93.184.216.34:8080/"); r.code != 0 {
		t.Fatalf("port 8080 should be open now: %+v", r)
	}
}

func TestRefusalsAreLoggedAndListed(t *testing.T) {
	db := existingDB(t)
	a, err := app.Open(context.Background(), db, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := guard.WithCaller(context.Background(), guard.Caller{Tool: "fetch_url", Agent: "helpdesk", Thread: "T-1"})
	if _, err := a.Guard().Get(ctx, "http://10.0.0.5/admin"); err == nil {
		t.Fatal("a private address was fetched")
	}
	if err := a.Close(); err != nil { // flushes the queued refusal
		t.Fatal(err)
	}
	r := runCLI(t, "refusals", "--json", "--limit", "5", "--db", db)
	var rows []app.LoggedRefusal
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("refusals --json: %v %+v", err, r)
	}
	got := rows[0]
	if got.Code != "forbidden" || got.Reason != "internal_address" || got.Agent != "helpdesk" || got.Thread != "T-1" || got.Tool != "fetch_url" ||
		got.Host != "10.0.0.5" || got.Fix == "" || len(got.Addresses) != 1 {
		t.Fatalf("refusal row: %+v", got)
	}
	if r := runCLI(t, "refusals", "--limit", "0", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "not a positive whole number") {
		t.Fatalf("bad limit: %+v", r)
	}
	if r := runCLI(t, "refusals", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "internal_address") {
		t.Fatalf("refusals table: %+v", r)
	}
}

// TestAnotherProcessPicksUpChangesWithinASecond: a running app (as in
// `console mcp`) sees an allowlist change made by another store handle.
func TestAnotherProcessPicksUpChangesWithinASecond(t *testing.T) {
	db := existingDB(t)
	a, err := app.Open(context.Background(), db, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Watch(ctx)
	if d := a.Guard().Decide(ctx, "http://93.184.216.34/"); !d.Allowed {
		t.Fatalf("PUBLIC WEB refused a public address: %s", d.Message)
	}
	start := time.Now()
	if r := runCLI(t, "allow", "add", "--db", db, "status.example.com"); r.code != 0 {
		t.Fatalf("allow add: %+v", r)
	}
	for time.Since(start) < time.Second {
		if d := a.Guard().Decide(ctx, "http://93.184.216.34/"); !d.Allowed {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the running app did not pick up the change within 1 s")
}

// TestConcurrentReloadsEndOnTheNewestConfiguration: the watch and console
// saves reload at the same time; when they are done, the policy in force
// is the one stored last.
func TestConcurrentReloadsEndOnTheNewestConfiguration(t *testing.T) {
	db := existingDB(t)
	a, err := app.Open(context.Background(), db, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			_ = a.Reload(ctx)
		}
	}()
	for i := 0; i < 20; i++ {
		if r := runCLI(t, "allow", "add", "--db", db, fmt.Sprintf("h%d.example.com", i)); r.code != 0 {
			t.Fatal(r)
		}
		if err := a.Reload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if n := a.Guard().Policy().Allowlist().Len(); n != 20 {
		t.Fatalf("the policy in force has %d entries, want the 20 stored", n)
	}
	if d := a.Guard().Decide(ctx, "http://93.184.216.34/"); d.Reason != "not_allowlisted" {
		t.Fatalf("decision under the newest list: %s", d.Reason)
	}
}

// TestConsoleDBEnvironment: every command takes its database from
// CONSOLE_DB when --db is not given.
func TestConsoleDBEnvironment(t *testing.T) {
	db := existingDB(t)
	t.Setenv("CONSOLE_DB", db)
	if r := runCLI(t, "allow", "add", "env.example.com"); r.code != 0 {
		t.Fatal(r)
	}
	if r := runCLI(t, "allow", "list", "--db", db); !strings.Contains(r.stdout, "env.example.com") {
		t.Fatalf("the entry did not land in CONSOLE_DB's file: %+v", r)
	}
}

func TestArgumentEdgeCases(t *testing.T) {
	db := existingDB(t)
	if r := runCLI(t, "allow", "add", "--db", db, "ok.example.com", ""); r.code != 2 || !strings.Contains(r.stderr, "argument 2 is empty; nothing was added") {
		t.Fatalf("an empty entry: %+v", r)
	}
	if r := runCLI(t, "allow", "list", "--db", db); !strings.HasPrefix(r.stdout, "PUBLIC WEB") {
		t.Fatalf("something was added: %+v", r)
	}
	if r := runCLI(t, "settings", "set", "reads_per_turn", "-1", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "-1 is outside 1–100") {
		t.Fatalf("a negative value must reach the setting's own check: %+v", r)
	}
	if r := runCLI(t, "allow", "add", "--note=why", "--db", db, "--", "a.example.com"); r.code != 0 || !strings.Contains(r.stdout, "added a.example.com") {
		t.Fatalf("--flag=value and --: %+v", r)
	}
}

// TestBadStoredEntrySaysHowToRemoveIt: a store edited by hand (or by
// another version) holds an entry that does not parse; every command that
// builds the policy says which command removes it.
func TestBadStoredEntrySaysHowToRemoveIt(t *testing.T) {
	db := existingDB(t)
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AddAllowlistEntries(context.Background(), models.AnyRevision, []models.AllowlistEntry{{Entry: "https://bad.example/", CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	r := runCLI(t, "check", "--db", db, "http://93.184.216.34/")
	if r.code != 1 || !strings.Contains(r.stderr, "the stored allowlist has a bad entry") || !strings.Contains(r.stderr, "console allow rm https://bad.example/") {
		t.Fatalf("check over a bad stored entry: %+v", r)
	}
	if r := runCLI(t, "allow", "rm", "--db", db, "https://bad.example/"); r.code != 0 {
		t.Fatalf("the suggested removal: %+v", r)
	}
	if r := runCLI(t, "check", "--db", db, "http://93.184.216.34/"); r.code != 0 {
		t.Fatalf("after the removal: %+v", r)
	}
}
