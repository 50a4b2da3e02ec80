package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/outboundhq/outbound/models"
)

func init() {
	commands["user"] = command{"add a console user: user add --role admin|support NAME (password on stdin)", runUser}
}

func runUser(ctx context.Context, e env, args []string) error {
	if len(args) == 0 || args[0] != "add" {
		return usagef("console user add --role admin|support NAME  (the password is read from stdin)")
	}
	var db, role string
	fs := newFlags("user add", &db)
	fs.StringVar(&role, "role", "", "admin or support")
	rest, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("name the user: console user add --role admin ada")
	}
	r := models.Role(role)
	if !r.Valid() {
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
	if len(password) < 10 || len(password) > 72 {
		return usagef("the password must have 10 to 72 bytes")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return err
	}
	store, err := models.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	if _, err := store.CreateUser(ctx, models.User{Name: name, PasswordHash: string(hash), Role: r}); err != nil {
		if errors.Is(err, models.ErrDuplicate) {
			return usagef("a user named %q already exists", name)
		}
		return err
	}
	if err := store.RecordAudit(ctx, models.Audit{Actor: actor(), Action: "user.add", Target: name, After: "role " + role}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "added %s (%s)\n", name, role)
	return nil
}
