package main

import (
	"errors"

	"github.com/outboundhq/outbound/internal/app"
)

// openIdentity opens the application layer over the database alone, for
// the `token` and `user` commands: they change only rows the running
// console reads where it checks them, so no guard is built and no
// integration key file is created.
func openIdentity(path string, mode app.DBMode) (*app.App, error) {
	a, err := app.OpenStoreOnly(path, mode)
	return a, cliOpenError(err)
}

// ruleError makes a rule's refusal (a bad name, role or password) a usage
// error: its message names the problem and the fix, and the command exits
// 2. Other errors pass through.
func ruleError(err error) error {
	var tn *app.TokenNameError
	var un *app.UserNameError
	var pw *app.PasswordError
	var re *app.RoleError
	if errors.As(err, &tn) || errors.As(err, &un) || errors.As(err, &pw) || errors.As(err, &re) {
		return usagef("%s", err)
	}
	return err
}
