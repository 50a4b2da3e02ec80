package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

const cliPassword = "correct horse battery\n"

// addCLIUser runs `console user add` and fails the test if it fails.
func addCLIUser(t *testing.T, db, role, name string) {
	t.Helper()
	if r := runCLIWithStdin(t, cliPassword, "user", "add", "--db", db, "--role", role, name); r.code != 0 {
		t.Fatalf("user add %s: %+v", name, r)
	}
}

// storedUser reads a user straight from the database.
func storedUser(t *testing.T, db, name string) (models.User, error) {
	t.Helper()
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	return store.UserByName(context.Background(), name)
}

func TestUserList(t *testing.T) {
	db := existingDB(t)
	if r := runCLI(t, "user", "list", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "No users. Add the first admin with: console user add --role admin NAME") {
		t.Fatalf("empty list: %+v", r)
	}
	addCLIUser(t, db, "admin", "ada")
	addCLIUser(t, db, "support", "sam")
	r := runCLI(t, "user", "list", "--db", db)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "ada ") || !strings.Contains(lines[2], "support") {
		t.Fatalf("list: %+v", r)
	}
	r = runCLI(t, "user", "ls", "--json", "--db", db)
	var users []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &users); err != nil || r.code != 0 {
		t.Fatalf("--json: %v %+v", err, r)
	}
	if len(users) != 2 || users[0]["name"] != "ada" || users[0]["role"] != "admin" || users[1]["role"] != "support" {
		t.Fatalf("--json users %+v", users)
	}
	for _, key := range []string{"created_at", "password_changed_at"} {
		if _, err := time.Parse(time.RFC3339, users[0][key].(string)); err != nil {
			t.Errorf("%s is not a time: %v", key, users[0][key])
		}
	}
	if strings.Contains(r.stdout, "$2a$") || strings.Contains(strings.ToLower(r.stdout), "hash") {
		t.Fatalf("the list shows password hashes:\n%s", r.stdout)
	}
	if r := runCLI(t, "user", "list", "--db", db, "ada"); r.code != 2 || !strings.Contains(r.stderr, "user list takes no arguments") {
		t.Fatalf("an argument: %+v", r)
	}
}

func TestUserRemove(t *testing.T) {
	db := existingDB(t)
	addCLIUser(t, db, "admin", "ada")
	addCLIUser(t, db, "support", "sam")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no name":    {[]string{"user", "rm"}, "name one user to remove: console user rm sam"},
		"two names":  {[]string{"user", "rm", "ada", "sam"}, "name one user to remove"},
		"unknown":    {[]string{"user", "rm", "ghost"}, `there is no user named "ghost"; see console user list`},
		"last admin": {[]string{"user", "rm", "ada"}, "ada is the last admin, so nothing was removed"},
	} {
		t.Run(name, func(t *testing.T) {
			if r := runCLI(t, append(tc.args, "--db", db)...); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("got %+v, want exit 2 and %q", r, tc.want)
			}
		})
	}
	if _, err := storedUser(t, db, "ada"); err != nil {
		t.Fatalf("ada is gone after refused removals: %v", err)
	}
	if r := runCLI(t, "user", "remove", "--db", db, "sam"); r.code != 0 || r.stdout != "removed sam (support); their sessions are ended\n" {
		t.Fatalf("remove sam: %+v", r)
	}
	if _, err := storedUser(t, db, "sam"); err == nil {
		t.Fatal("sam is still there")
	}
	if got, want := strings.Join(auditActions(t, db), ", "), "user.add ada, user.add sam, user.remove sam"; got != want {
		t.Fatalf("audit trail %q, want %q", got, want)
	}
}

func TestUserPasswd(t *testing.T) {
	db := existingDB(t)
	addCLIUser(t, db, "admin", "ada")
	before, _ := storedUser(t, db, "ada")
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateSession(context.Background(), before.ID, "session-hash", "127.0.0.1", "test", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	store.Close()
	for name, tc := range map[string]struct {
		stdin string
		args  []string
		want  string
	}{
		"no name":     {"a new password 1\n", []string{}, "name one user"},
		"no password": {"", []string{"ada"}, `no password on stdin; pipe it in, e.g. printf '%s\n' "$PASSWORD" | console user passwd ada`},
		"too short":   {"short\n", []string{"ada"}, "the password has 5 characters; use at least 10"},
		"too long":    {strings.Repeat("p", 73) + "\n", []string{"ada"}, "the password is 73 bytes long; use at most 72 bytes"},
		"unknown":     {"a new password 1\n", []string{"ghost"}, `there is no user named "ghost"`},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLIWithStdin(t, tc.stdin, append([]string{"user", "passwd", "--db", db}, tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("got %+v, want exit 2 and %q", r, tc.want)
			}
		})
	}
	if after, _ := storedUser(t, db, "ada"); after.PasswordHash != before.PasswordHash {
		t.Fatal("a refused passwd changed the password")
	}
	r := runCLIWithStdin(t, "a new password 1\n", "user", "passwd", "--db", db, "ada")
	if r.code != 0 || r.stdout != "password of ada changed; their sessions are ended\n" {
		t.Fatalf("passwd: %+v", r)
	}
	after, _ := storedUser(t, db, "ada")
	if bcrypt.CompareHashAndPassword([]byte(after.PasswordHash), []byte("a new password 1")) != nil {
		t.Fatal("the new password does not work")
	}
	store, _ = models.Open(db)
	defer store.Close()
	if _, _, err := store.SessionUser(context.Background(), "session-hash", time.Now().UTC(), time.Hour, 24*time.Hour); err == nil {
		t.Fatal("ada's session survived the password change")
	}
	if got, want := strings.Join(auditActions(t, db), ", "), "user.add ada, user.password ada"; got != want {
		t.Fatalf("audit trail %q, want %q", got, want)
	}
}

func TestUserCommandMistakes(t *testing.T) {
	db := tempDB(t)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no subcommand":  {[]string{"user"}, "name a subcommand before the flags: console user add"},
		"unknown sub":    {[]string{"user", "delete", "ada"}, `unknown subcommand "delete"`},
		"bad role":       {[]string{"user", "add", "--role", "root", "ada"}, `--role "root" is not a role; use --role admin or --role support`},
		"name w/ space":  {[]string{"user", "add", "--role", "admin", "ada lovelace"}, `"ada lovelace" is not a user name`},
		"list no db":     {[]string{"user", "list"}, "there is no database at"},
		"rm no db":       {[]string{"user", "rm", "ada"}, "there is no database at"},
		"passwd no db":   {[]string{"user", "passwd", "ada"}, "there is no database at"},
		"json on remove": {[]string{"user", "rm", "--json", "ada"}, "--json is not a flag of console user rm"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLIWithStdin(t, cliPassword, append(tc.args, "--db", db)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("got %+v, want exit 2 and %q", r, tc.want)
			}
			assertMissing(t, db)
		})
	}
	r := runCLI(t, "user", "--help")
	for _, want := range []string{"console user list [--json]", "console user rm NAME", "console user passwd NAME", "flags of console user add", "--role ROLE"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("user --help lacks %q: %+v", want, r)
		}
	}
}

// TestCommandsApplyTheSharedRules: the command line accepts exactly the
// token names and passwords the application layer's rules accept (the
// console's forms are held to the same rules in web's tests).
func TestCommandsApplyTheSharedRules(t *testing.T) {
	db := existingDB(t)
	for _, name := range []string{"bot-1", "B.o_t", strings.Repeat("a", app.MaxNameLength), strings.Repeat("b", app.MaxNameLength+1), "-bot", "bot/1", "bøt"} {
		want := 0
		if app.CheckTokenName(name) != nil {
			want = 2
		}
		if r := runCLI(t, "token", "create", "--db", db, "--", name); r.code != want {
			t.Errorf("token name %q: exit %d, want %d (%s)", name, r.code, want, r.stderr)
		}
	}
	for i, pw := range []string{strings.Repeat("é", app.MinPasswordChars), strings.Repeat("é", app.MinPasswordChars-1), strings.Repeat("p", app.MaxPasswordBytes), strings.Repeat("p", app.MaxPasswordBytes+1)} {
		want := 0
		if app.CheckPassword(pw) != nil {
			want = 2
		}
		name := "user" + string(rune('a'+i))
		if r := runCLIWithStdin(t, pw+"\n", "user", "add", "--db", db, "--role", "support", name); r.code != want {
			t.Errorf("password of %d chars, %d bytes: exit %d, want %d (%s)", len([]rune(pw)), len(pw), r.code, want, r.stderr)
		}
	}
}
