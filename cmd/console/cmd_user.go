package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/models"
)

const userUsage = "user add --role admin|support NAME   (the password is read from stdin)"

// Password bounds. The lower one is counted in characters, as people
// count; the upper one in bytes, because bcrypt reads at most 72 bytes
// and would silently ignore the rest.
const (
	minPasswordChars = 10
	maxPasswordBytes = 72
)

func runUser(ctx context.Context, e env, args []string) error {
	if len(args) == 0 || (args[0] != "add" && !isHelpArg(args[0])) {
		return usagef("console %s", userUsage)
	}
	if args[0] == "add" {
		args = args[1:]
	}
	var db, role string
	fs := newFlags("user add", &db)
	fs.StringVar(&role, "role", "", "the user's `role`: admin or support (required)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("name the user: console user add --role admin ada")
	}
	r := models.Role(role)
	switch {
	case role == "":
		return usagef("--role is required: admin or support, e.g. console user add --role admin %s", rest[0])
	case !r.Valid():
		return usagef("--role %q is not a role; use --role admin or --role support", role)
	}
	name := rest[0]
	if strings.ContainsAny(name, " \t") || len(name) > 64 {
		return usagef("%q is not a user name: use up to 64 characters without spaces", name)
	}
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	password := strings.TrimRight(line, "\r\n")
	if err != nil && password == "" {
		return usagef("no password on stdin; pipe it in, e.g. printf '%%s\\n' \"$PASSWORD\" | console user add --role %s %s", role, name)
	}
	if err := checkPassword(password); err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return err
	}
	store, err := openStore(db, mayCreate)
	if err != nil {
		return err
	}
	defer store.Close()
	if _, err := store.CreateUser(ctx, models.User{Name: name, PasswordHash: string(hash), Role: r}); err != nil {
		if errors.Is(err, models.ErrDuplicate) {
			return usagef("a user named %q already exists; pick another name, or, to give that user a new password, have an admin reset it on the console's Users page", name)
		}
		return err
	}
	if err := store.RecordAudit(ctx, models.Audit{Actor: actor(), Action: "user.add", Target: name, After: "role " + role}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "added %s (%s)\n", name, role)
	return nil
}

// checkPassword says precisely which bound a password misses.
func checkPassword(password string) error {
	if n := utf8.RuneCountInString(password); n < minPasswordChars {
		return usagef("the password has %d characters; use at least %d", n, minPasswordChars)
	}
	if n := len(password); n > maxPasswordBytes {
		return usagef("the password is %d bytes long; use at most %d bytes (%d plain ASCII characters, fewer with accented letters or symbols)", n, maxPasswordBytes, maxPasswordBytes)
	}
	return nil
}
