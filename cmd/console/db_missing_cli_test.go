package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/app"
)

// runCLIFor is runCLI under a deadline, for commands that would otherwise
// serve until stopped (mcp, proxy) if they opened the database.
func runCLIFor(t *testing.T, d time.Duration, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errOut strings.Builder
	code := run(ctx, env{strings.NewReader(stdin), &out, &errOut}, args)
	return result{code, out.String(), errOut.String()}
}

// assertMissingDatabaseRefusal checks the refusal of a missing database:
// exit 2, the problem and every way to fix it named, and no file made.
func assertMissingDatabaseRefusal(t *testing.T, r result, db string) {
	t.Helper()
	for _, want := range []string{"there is no database at " + db, "--db", "CONSOLE_DB", "console init", "console serve"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if r.code != 2 || r.stdout != "" {
		t.Errorf("exit %d, stdout %q; want exit 2 and nothing on stdout", r.code, r.stdout)
	}
	if t.Failed() {
		t.Logf("got %+v", r)
	}
	assertMissing(t, db)
	assertMissing(t, app.KeyPath(db))
	assertMissing(t, db+"-wal")
}

// TestEnforcingCommandsRefuseAMissingDatabase: a mistyped --db must not
// give agents a fresh database's PUBLIC WEB (issue 9, finding 2).
func TestEnforcingCommandsRefuseAMissingDatabase(t *testing.T) {
	for name, args := range map[string][]string{
		"mcp":               {"mcp"},
		"proxy":             {"proxy", "--addr", "127.0.0.1:0"},
		"tool":              {"tool", "fetch_url", `{"url": "http://93.184.216.34/"}`},
		"integrations test": {"integrations", "test", "x"},
		"check":             {"check", "http://93.184.216.34/"},
		"fetch":             {"fetch", "http://93.184.216.34/"},
		"refusals":          {"refusals"},
		"ticket":            {"ticket", "HD-1"},
		"allow list":        {"allow", "list"},
		"settings list":     {"settings", "list"},
	} {
		t.Run(name, func(t *testing.T) {
			db := tempDB(t)
			r := runCLIFor(t, 3*time.Second, "", append(args, "--db", db)...)
			assertMissingDatabaseRefusal(t, r, db)
		})
	}
}

// TestChangingCommandsRefuseAMissingDatabase: a typo in a change's --db
// would otherwise leave the change in a stray new database, unseen by the
// console and the agents, while the command reports success.
func TestChangingCommandsRefuseAMissingDatabase(t *testing.T) {
	for name, args := range map[string]func(db string) []string{
		"allow add":        func(db string) []string { return []string{"allow", "add", "--db", db, "a.example.com"} },
		"settings set":     func(db string) []string { return []string{"settings", "set", "--db", db, "timeout", "30s"} },
		"token create":     func(db string) []string { return []string{"token", "create", "--db", db, "bot"} },
		"user add":         func(db string) []string { return []string{"user", "add", "--db", db, "--role", "admin", "ada"} },
		"integrations add": func(db string) []string { return addOrderArgs(db, "http://orders.example.com") },
	} {
		t.Run(name, func(t *testing.T) {
			db := tempDB(t)
			r := runCLIFor(t, 10*time.Second, "correct horse battery\n", args(db)...)
			assertMissingDatabaseRefusal(t, r, db)
		})
	}
}

// TestMissingDefaultDatabaseNamesWhereItLooked: an MCP client that starts
// `console mcp` from / or $HOME looks for console.db there; the refusal
// says which directory that was.
func TestMissingDefaultDatabaseNamesWhereItLooked(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("CONSOLE_DB", "")
	r := runCLIFor(t, 3*time.Second, "", "mcp")
	if r.code != 2 || !strings.Contains(r.stderr, "there is no database at console.db ("+filepath.Join(dir, "console.db")+")") ||
		!strings.Contains(r.stderr, "console init") {
		t.Fatalf("got %+v", r)
	}
	assertMissing(t, filepath.Join(dir, "console.db"))
}

func TestInitCreatesTheDatabaseAndItsKey(t *testing.T) {
	db := tempDB(t)
	r := runCLI(t, "init", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "created the database "+db) || !strings.Contains(r.stdout, app.KeyPath(db)) ||
		!strings.Contains(r.stdout, "console user add --role admin NAME") || !strings.Contains(r.stdout, "console serve") {
		t.Fatalf("init: %+v", r)
	}
	for _, p := range []string{db, app.KeyPath(db)} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("init did not create %s: %v", p, err)
		}
	}
	// The new database works for the commands that refused it before.
	if r := runCLI(t, "allow", "list", "--db", db); r.code != 0 || !strings.HasPrefix(r.stdout, "PUBLIC WEB") {
		t.Fatalf("allow list after init: %+v", r)
	}
}

func TestInitLeavesAnExistingDatabaseAlone(t *testing.T) {
	db := tempDB(t)
	if r := runCLI(t, "init", "--db", db); r.code != 0 {
		t.Fatal(r)
	}
	if r := runCLI(t, "allow", "add", "--db", db, "status.example.com"); r.code != 0 {
		t.Fatal(r)
	}
	key, err := os.ReadFile(app.KeyPath(db))
	if err != nil {
		t.Fatal(err)
	}
	audit := auditActions(t, db)
	r := runCLI(t, "init", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "already exists") || !strings.Contains(r.stdout, "nothing changed") {
		t.Fatalf("init again: %+v", r)
	}
	if again, _ := os.ReadFile(app.KeyPath(db)); string(again) != string(key) {
		t.Fatal("init again replaced the secret key")
	}
	if got := auditActions(t, db); strings.Join(got, "|") != strings.Join(audit, "|") {
		t.Fatalf("init again changed the audit trail: %v, was %v", got, audit)
	}
	if r := runCLI(t, "allow", "list", "--db", db); !strings.Contains(r.stdout, "status.example.com") {
		t.Fatalf("init again lost the allowlist: %+v", r)
	}
}

// TestInitWithAKeyInTheEnvironmentWritesNoKeyFile: with CONSOLE_SECRET_KEY
// set, serve reads the key from there, so init leaves no file to leak.
func TestInitWithAKeyInTheEnvironmentWritesNoKeyFile(t *testing.T) {
	t.Setenv("CONSOLE_SECRET_KEY", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	db := tempDB(t)
	r := runCLI(t, "init", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "CONSOLE_SECRET_KEY") {
		t.Fatalf("init: %+v", r)
	}
	assertMissing(t, app.KeyPath(db))
}

func TestInitRefusesABadKeyAndCreatesNothing(t *testing.T) {
	t.Setenv("CONSOLE_SECRET_KEY", "not-a-key")
	db := tempDB(t)
	r := runCLI(t, "init", "--db", db)
	if r.code == 0 || !strings.Contains(r.stderr, "CONSOLE_SECRET_KEY") {
		t.Fatalf("init: %+v", r)
	}
	assertMissing(t, db)
}
