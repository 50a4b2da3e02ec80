package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

const tokenUsage = "token create NAME\ntoken list [--json]\ntoken revoke NAME"

func runToken(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("token", &db)
	fs.BoolVar(&asJSON, "json", false, "token list only: print the tokens as JSON")
	sub, rest, err := parseSubcommand(fs, args, tokenUsage)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		switch {
		case len(rest) > 1:
			return usagef("give one name only, not %d (%s): console token create helpdesk-bot; create one token per agent", len(rest), strings.Join(rest, " "))
		case len(rest) == 0:
			return usagef("name the agent: console token create helpdesk-bot")
		}
		return tokenCreate(ctx, e, db, rest[0])
	case "list", "ls":
		if len(rest) != 0 {
			return usagef("token list takes no arguments")
		}
		return tokenList(ctx, e, db, asJSON)
	case "revoke":
		switch {
		case len(rest) > 1:
			return usagef("give one name only, not %d (%s): console token revoke helpdesk-bot", len(rest), strings.Join(rest, " "))
		case len(rest) == 0:
			return usagef("name the token to revoke: console token revoke helpdesk-bot")
		}
		return tokenRevoke(ctx, e, db, rest[0])
	}
	return usagef("unknown subcommand %q: %s", sub, oneLineUsage(tokenUsage))
}

func tokenCreate(ctx context.Context, e env, db, name string) error {
	// The rule is checked before the database is opened.
	if err := app.CheckTokenName(name); err != nil {
		return ruleError(err)
	}
	a, err := openIdentity(db, mustExist)
	if err != nil {
		return err
	}
	defer a.Close()
	token, err := a.CreateToken(ctx, actor(), name)
	if errors.Is(err, models.ErrDuplicate) {
		return usagef("a token named %q already exists (revoked tokens keep their name, for the record); pick another name, e.g. %s-2", name, name)
	}
	if err != nil {
		return ruleError(err)
	}
	fmt.Fprintln(e.stdout, token)
	fmt.Fprintf(e.stderr, "Token for %s created. It is shown only now: store it in the agent's secret settings.\n", name)
	return nil
}

type tokenJSON struct {
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

func tokenList(ctx context.Context, e env, db string, asJSON bool) error {
	a, err := openIdentity(db, mustExist)
	if err != nil {
		return err
	}
	defer a.Close()
	toks, err := a.ListTokens(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]tokenJSON, len(toks))
		for i, t := range toks {
			out[i] = tokenJSON{t.Name, t.CreatedAt.UTC(), t.LastUsedAt, t.RevokedAt}
		}
		return printListJSON(e, out)
	}
	if len(toks) == 0 {
		fmt.Fprintln(e.stdout, "No tokens. Create one with: console token create NAME")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCREATED\tLAST USED\tSTATE")
	for _, t := range toks {
		state, used := "active", "never"
		if t.RevokedAt != nil {
			state = "revoked " + listTime(*t.RevokedAt)
		}
		if t.LastUsedAt != nil {
			used = listTime(*t.LastUsedAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, listTime(t.CreatedAt), used, state)
	}
	return tw.Flush()
}

func tokenRevoke(ctx context.Context, e env, db, name string) error {
	a, err := openIdentity(db, mustExist)
	if err != nil {
		return err
	}
	defer a.Close()
	var already *app.AlreadyRevokedError
	switch err := a.RevokeToken(ctx, actor(), name); {
	case errors.Is(err, models.ErrNotFound):
		return usagef("there is no token named %q; see console token list", name)
	case errors.As(err, &already):
		return usagef("%s", already)
	case err != nil:
		return err
	}
	fmt.Fprintf(e.stdout, "revoked %s\n", name)
	return nil
}

// listTime is a time as the lists print it: local, to the minute.
func listTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }

// printListJSON writes v as indented JSON, as every --json does.
func printListJSON(e env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
