package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

const userUsage = "user add --role admin|support NAME   (the password is read from stdin)\n" +
	"user list [--json]\n" +
	"user rm NAME\n" +
	"user passwd NAME   (the new password is read from stdin)"

func runUser(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, args, userUsage, []subcommand{
		{[]string{"add"}, userAdd},
		{[]string{"list", "ls"}, userList},
		{[]string{"rm", "remove"}, userRemove},
		{[]string{"passwd", "password"}, userPasswd},
	})
}

func userAdd(ctx context.Context, e env, args []string) error {
	var db, roleText string
	fs := newFlags("user add", &db)
	fs.StringVar(&roleText, "role", "", "the user's `role`: admin or support (required)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("name the user: console user add --role admin ada")
	}
	name := rest[0]
	if roleText == "" {
		return usagef("--role is required: admin or support, e.g. console user add --role admin %s", name)
	}
	role, err := app.ParseRole(roleText)
	if err != nil {
		return usagef("--role %q is not a role; use --role admin or --role support", roleText)
	}
	// The rules are checked before the database is opened.
	if err := app.CheckUserName(name); err != nil {
		return ruleError(err)
	}
	password, err := readPassword(e, fmt.Sprintf("console user add --role %s %s", role, name))
	if err != nil {
		return err
	}
	a, err := openIdentity(db, mustExist)
	if err != nil {
		return err
	}
	defer a.Close()
	if _, err := a.AddUser(ctx, actor(), name, role, password); err != nil {
		if errors.Is(err, models.ErrDuplicate) {
			return usagef("a user named %q already exists; pick another name, or give that user a new password with: console user passwd %s", name, name)
		}
		return ruleError(err)
	}
	fmt.Fprintf(e.stdout, "added %s (%s)\n", name, role)
	return nil
}

type userJSON struct {
	Name              string    `json:"name"`
	Role              string    `json:"role"`
	CreatedAt         time.Time `json:"created_at"`
	PasswordChangedAt time.Time `json:"password_changed_at"`
}

func userList(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("user list", &db)
	fs.BoolVar(&asJSON, "json", false, "print the users as JSON")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("user list takes no arguments (%s); to see one user, look for their name in the list", strings.Join(rest, " "))
	}
	a, err := openIdentity(db, mustExist)
	if err != nil {
		return err
	}
	defer a.Close()
	users, err := a.ListUsers(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]userJSON, len(users))
		for i, u := range users {
			out[i] = userJSON{u.Name, string(u.Role), u.CreatedAt.UTC(), u.PasswordChangedAt.UTC()}
		}
		return printListJSON(e, out)
	}
	if len(users) == 0 {
		fmt.Fprintln(e.stdout, "No users. Add the first admin with: console user add --role admin NAME (the password on stdin)")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tCREATED\tPASSWORD CHANGED")
	for _, u := range users {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Name, u.Role, listTime(u.CreatedAt), listTime(u.PasswordChangedAt))
	}
	return tw.Flush()
}

func userRemove(ctx context.Context, e env, args []string) error {
	db, name, err := oneUserArgs("rm", args, "name one user to remove: console user rm sam")
	if err != nil {
		return err
	}
	u, err := changeNamedUser(ctx, db, name, "removed", func(a *app.App, u app.User) error {
		_, err := a.RemoveUser(ctx, actor(), u.ID)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "removed %s (%s); their sessions are ended\n", name, u.Role)
	return nil
}

func userPasswd(ctx context.Context, e env, args []string) error {
	db, name, err := oneUserArgs("passwd", args, "name one user: printf '%s\\n' \"$PASSWORD\" | console user passwd ada")
	if err != nil {
		return err
	}
	password, err := readPassword(e, "console user passwd "+name)
	if err != nil {
		return err
	}
	_, err = changeNamedUser(ctx, db, name, "changed", func(a *app.App, u app.User) error {
		_, err := a.ResetPassword(ctx, actor(), u.ID, password)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "password of %s changed; their sessions are ended\n", name)
	return nil
}

// oneUserArgs parses the arguments of a subcommand about one user: its
// flags and the user's name; missing is the message when there is not
// exactly one name.
func oneUserArgs(sub string, args []string, missing string) (db, name string, err error) {
	fs := newFlags("user "+sub, &db)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return "", "", err
	}
	if len(rest) != 1 {
		return "", "", usagef("%s", missing)
	}
	return db, rest[0], nil
}

// changeNamedUser opens the database, finds the named user and applies
// change to them, wording a refusal for the command line; what says
// what did not happen ("removed"). It returns the user as they were.
func changeNamedUser(ctx context.Context, db, name, what string, change func(*app.App, app.User) error) (app.User, error) {
	a, err := openIdentity(db, mustExist)
	if err != nil {
		return app.User{}, err
	}
	defer a.Close()
	u, err := a.UserByName(ctx, name)
	if errors.Is(err, models.ErrNotFound) {
		return app.User{}, usagef("there is no user named %q; see console user list", name)
	}
	if err != nil {
		return app.User{}, err
	}
	if err := change(a, u); err != nil {
		return app.User{}, userChangeError(err, name, what)
	}
	return u, nil
}

// userChangeError words a refused change to the named user; what says
// what did not happen ("removed").
func userChangeError(err error, name, what string) error {
	switch {
	case errors.Is(err, models.ErrLastAdmin):
		return usagef("%s is the last admin, so nothing was %s: the console needs an admin. Add another first (console user add --role admin NAME), then try again", name, what)
	case errors.Is(err, models.ErrNotFound):
		return usagef("there is no user named %q any more (someone removed them meanwhile); see console user list", name)
	}
	return ruleError(err)
}

// readPassword reads one line from stdin: a password is never an argument,
// where the shell history and the process list would keep it. It checks
// the password policy before anything is opened; example is the command
// to show with a pipe when stdin is empty.
func readPassword(e env, example string) (string, error) {
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	password := strings.TrimRight(line, "\r\n")
	if err != nil && password == "" {
		return "", usagef("no password on stdin; pipe it in, e.g. printf '%%s\\n' \"$PASSWORD\" | %s", example)
	}
	if err := app.CheckPassword(password); err != nil {
		return "", ruleError(err)
	}
	return password, nil
}
