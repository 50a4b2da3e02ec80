package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// runCLIWithStdin is runCLI with text on stdin (user add reads the password).
func runCLIWithStdin(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut strings.Builder
	code := run(context.Background(), env{strings.NewReader(stdin), &out, &errOut}, args)
	return result{code, out.String(), errOut.String()}
}

// auditActions lists the audit trail's actions, oldest first.
func auditActions(t *testing.T, db string) []string {
	t.Helper()
	rows := auditRecords(t, db)
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Action + " " + r.Target
	}
	return out
}

func assertMissing(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s exists (stat: %v); the command must not create it", path, err)
	}
}

func TestReadOnlyCommandsRefuseAMissingDatabase(t *testing.T) {
	for name, args := range map[string][]string{
		"check":         {"check", "http://93.184.216.34/"},
		"fetch":         {"fetch", "http://93.184.216.34/"},
		"allow list":    {"allow", "list"},
		"allow rm":      {"allow", "rm", "a.example.com"},
		"refusals":      {"refusals"},
		"token list":    {"token", "list"},
		"token revoke":  {"token", "revoke", "bot"},
		"settings list": {"settings", "list"},
	} {
		t.Run(name, func(t *testing.T) {
			db := tempDB(t)
			r := runCLI(t, append(args, "--db", db)...)
			want := "there is no database at " + db + "; check --db or CONSOLE_DB"
			if r.code != 2 || !strings.Contains(r.stderr, want) || r.stdout != "" {
				t.Fatalf("got %+v, want exit 2 and %q", r, want)
			}
			assertMissing(t, db)
			assertMissing(t, app.KeyPath(db))
		})
	}
}

func TestReadOnlyCommandsLeaveNoKeyFile(t *testing.T) {
	db := existingDB(t)
	for _, args := range [][]string{{"check", "http://93.184.216.34/"}, {"fetch", "http://10.0.0.1/"}} {
		runCLI(t, append(args, "--db", db)...)
	}
	assertMissing(t, app.KeyPath(db))
}

func TestDatabaseOpenErrorsSpeakCLI(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"check on a directory": {"check", "--db", dir, "http://93.184.216.34/"},
		"serve in no dir":      {"serve", "--addr", "127.0.0.1:0", "--db", dir + "/missing/console.db"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, args...)
			if r.code == 0 || strings.Contains(r.stderr, "models:") || !strings.Contains(r.stderr, "cannot open the database") {
				t.Fatalf("%+v", r)
			}
		})
	}
}

func TestTokenNamesAndRevocation(t *testing.T) {
	db := existingDB(t)
	if r := runCLI(t, "token", "create", "--db", db, "bot"); r.code != 0 {
		t.Fatal(r)
	}
	if r := runCLI(t, "token", "revoke", "--db", db, "bot"); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "token", "create", "--db", db, "bot")
	if r.code != 2 || !strings.Contains(r.stderr, "revoked tokens keep their name") || !strings.Contains(r.stderr, "pick another name, e.g. bot-2") {
		t.Fatalf("reusing a revoked token's name: %+v", r)
	}
	r = runCLI(t, "token", "revoke", "--db", db, "bot")
	if r.code != 2 || !strings.Contains(r.stderr, `the token "bot" is already revoked`) || !strings.Contains(r.stderr, "nothing changed") {
		t.Fatalf("revoking twice: %+v", r)
	}
	if got, want := strings.Join(auditActions(t, db), ", "), "token.create bot, token.revoke bot"; got != want {
		t.Fatalf("audit trail %q, want %q", got, want)
	}
	r = runCLI(t, "token", "create", "--db", db, "a", "b")
	if r.code != 2 || !strings.Contains(r.stderr, "give one name only") {
		t.Fatalf("two names: %+v", r)
	}
	if r := runCLI(t, "token", "create", "--json", "--db", db, "c"); r.code != 2 || !strings.Contains(r.stderr, "--json applies to console token list only") {
		t.Fatalf("--json on create: %+v", r)
	}
}

func TestSettingsSetArguments(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "settings", "set", "--db", db, "ports", "8080,", "8443")
	if r.code != 2 || !strings.Contains(r.stderr, "quote a value containing spaces or commas") || !strings.Contains(r.stderr, `settings set ports "8080, 8443"`) {
		t.Fatalf("unquoted list: %+v", r)
	}
	if r := runCLI(t, "settings", "set", "--db", db, "ports", "8443,8080"); r.code != 0 {
		t.Fatal(r)
	}
	r = runCLI(t, "settings", "set", "--db", db, "ports", "8080, 8443")
	if r.code != 0 || r.stdout != "ports is already 8080, 8443; nothing changed\n" {
		t.Fatalf("same value: %+v", r)
	}
	if got, want := strings.Join(auditActions(t, db), ", "), "settings.set ports"; got != want {
		t.Fatalf("audit trail %q, want %q", got, want)
	}
}

// TestSettingsSetRepairsAnInvalidStoredValue: the error that invalid stored
// settings give says to fix them with settings set, so that must work.
func TestSettingsSetRepairsAnInvalidStoredValue(t *testing.T) {
	db := existingDB(t)
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetSettings(context.Background(), models.AnyRevision, "test", map[string]string{"timeout": "forever"}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	if r := runCLI(t, "check", "--db", db, "http://93.184.216.34/"); r.code != 1 || !strings.Contains(r.stderr, "fix them with `console settings set`") {
		t.Fatalf("check under invalid settings: %+v", r)
	}
	if r := runCLI(t, "settings", "set", "--db", db, "timeout", "20s"); r.code != 0 || r.stdout != "timeout = 20s\n" {
		t.Fatalf("repair: %+v", r)
	}
	if r := runCLI(t, "check", "--db", db, "http://93.184.216.34/"); r.code != 0 {
		t.Fatalf("check after the repair: %+v", r)
	}
}

func TestSettingsListTableAndJSON(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "settings", "list", "--db", db)
	if r.code != 0 {
		t.Fatal(r)
	}
	lines := strings.Split(r.stdout, "\n")
	if !strings.HasPrefix(lines[0], "KEY") || !strings.HasPrefix(lines[1], "timeout ") || !strings.HasPrefix(lines[2], "    Timeout: ") {
		t.Fatalf("layout:\n%s", r.stdout)
	}
	// The value column is capped, so a short row stays short even though
	// user_agent's value is long.
	if n := len(lines[1]); n > 80 {
		t.Fatalf("the timeout row is %d characters wide, padded to a long value:\n%s", n, r.stdout)
	}
	var rows []settingJSON
	r = runCLI(t, "settings", "list", "--json", "--db", db)
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != len(tools.SettingDefs) {
		t.Fatalf("settings list --json: %v\n%s", err, r.stdout)
	}
	defaults := tools.DefaultSettings()
	for _, row := range rows {
		if row.Value != defaults.Value(row.Key) || row.Default != row.Value || row.Label == "" || row.Help == "" {
			t.Errorf("row %+v on a fresh database", row)
		}
	}
	if long := defaults.Value("user_agent"); len(long) > settingCellWidth && (!strings.Contains(r.stdout, long) || strings.Contains(runCLI(t, "settings", "list", "--db", db).stdout, long)) {
		t.Errorf("a long value must be whole in --json and cut short in the table")
	}
}

func TestHelp(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"help check":      {[]string{"help", "check"}, []string{"usage: console check [--agent NAME] [--tool TOOL] [--json] URL", "decide a URL", "--json", "--db FILE"}},
		"check --help":    {[]string{"check", "--help"}, []string{"usage: console check [--agent NAME] [--tool TOOL] [--json] URL", "flags:"}},
		"fetch -h":        {[]string{"fetch", "-h"}, []string{"usage: console fetch", "--start N"}},
		"allow --help":    {[]string{"allow", "--help"}, []string{"usage: console allow add", "console allow rm", "flags of console allow add:", "--note TEXT", "flags of console allow list:"}},
		"allow add -h":    {[]string{"allow", "add", "-h"}, []string{"usage: console allow add", "--note TEXT"}},
		"settings --help": {[]string{"settings", "--help"}, []string{"usage: console settings list [--json]", "console settings set KEY VALUE", "--json"}},
		"token --help":    {[]string{"token", "--help"}, []string{"usage: console token create NAME", "--json"}},
		"user --help":     {[]string{"user", "--help"}, []string{"usage: console user add", "--role ROLE"}},
		"serve --help":    {[]string{"serve", "--help"}, []string{"--addr HOST:PORT", "(default 127.0.0.1:8080)"}},
		"console --help":  {[]string{"--help"}, []string{"usage: console COMMAND", "console help COMMAND"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("%+v", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("help lacks %q:\n%s", w, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "default false") || strings.Contains(r.stdout, `default ""`) {
				t.Errorf("help shows an empty default:\n%s", r.stdout)
			}
		})
	}
	if r := runCLI(t); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "usage: console COMMAND") {
		t.Fatalf("bare console: %+v", r)
	}
}

func TestFlagMistakesAreSentences(t *testing.T) {
	db := existingDB(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"not a number":    {[]string{"fetch", "--start", "abc", "http://x/"}, `--start "abc" is not a whole number; pass 0 or the number a previous part gave`},
		"bool with value": {[]string{"check", "--json=maybe", "http://x/"}, `--json takes no value, or =true or =false (e.g. --json=false); "maybe" is neither`},
		"missing value":   {[]string{"refusals", "--limit"}, "--limit needs a value: --limit N, e.g. --limit 50"},
		"unknown flag":    {[]string{"allow", "list", "--note", "x"}, "--note is not a flag of console allow list"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, append(tc.args, "--db", db)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "parse error") {
				t.Fatalf("got %+v, want %q", r, tc.want)
			}
		})
	}
}

func TestUserAddMessages(t *testing.T) {
	db := existingDB(t)
	good := "correct horse battery\n"
	// In order: "taken" relies on "ten accented chars" having added ada.
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"no role", good, []string{"ada"}, 2, "--role is required: admin or support"},
		{"short in chars", strings.Repeat("é", 9) + "\n", []string{"--role", "admin", "ada"}, 2, "the password has 9 characters; use at least 10"},
		{"long in bytes", strings.Repeat("é", 37) + "\n", []string{"--role", "admin", "ada"}, 2, "the password is 74 bytes long; use at most 72 bytes"},
		{"ten accented chars", strings.Repeat("é", 10) + "\n", []string{"--role", "admin", "ada"}, 0, "added ada (admin)"},
		{"taken", good, []string{"--role", "support", "ada"}, 2, `a user named "ada" already exists; pick another name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLIWithStdin(t, tc.stdin, append([]string{"user", "add", "--db", db}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Fatalf("got %+v, want exit %d and %q", r, tc.code, tc.want)
			}
		})
	}
}

func TestAllowMessagesSpeakCLI(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "allow", "add", "--db", db, "ok.example.com", "https://bad.example.com/")
	if r.code != 2 || strings.Contains(r.stderr, "line") || strings.Contains(r.stderr, "models") ||
		!strings.Contains(r.stderr, `"https://bad.example.com/": the entry has a scheme; write only the host`) {
		t.Fatalf("bad entry: %+v", r)
	}
	r = runCLI(t, "allow", "add", "--db", db, "--note", "two\nlines", "ok.example.com")
	if r.code != 2 || !strings.Contains(r.stderr, "--note: the note contains a line break or control character; write it on one line") {
		t.Fatalf("bad note: %+v", r)
	}
	r = runCLI(t, "allow", "rm", "--db", db, "nothere.example.com")
	if r.code != 2 || strings.Contains(r.stderr, "models") || !strings.Contains(r.stderr, "nothing was removed: nothere.example.com is not on the allowlist") {
		t.Fatalf("rm unknown: %+v", r)
	}
}

func TestListenAddressMistakes(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	db := existingDB(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"serve nonsense":    {[]string{"serve", "--addr", "nonsense"}, `--addr "nonsense" is not HOST:PORT`},
		"serve bad port":    {[]string{"serve", "--addr", "127.0.0.1:99999"}, `--addr "127.0.0.1:99999" has no valid port`},
		"serve port in use": {[]string{"serve", "--addr", busy.Addr().String()}, "cannot listen on " + busy.Addr().String()},
		"proxy port in use": {[]string{"proxy", "--addr", busy.Addr().String()}, "cannot listen on " + busy.Addr().String()},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, append(tc.args, "--db", db)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "--addr") {
				t.Fatalf("got %+v, want exit 2 and %q", r, tc.want)
			}
		})
	}
}
