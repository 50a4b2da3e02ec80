package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"text/tabwriter"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

func init() {
	commands["token"] = command{"manage agents' API tokens: token create NAME, token list, token revoke NAME", runToken}
}

var tokenName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`)

func runToken(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		return usagef("console token create NAME | console token list [--json] | console token revoke NAME")
	}
	var db string
	var asJSON bool
	fs := newFlags("token", &db)
	if args[0] == "list" {
		fs.BoolVar(&asJSON, "json", false, "print the tokens as JSON")
	}
	rest, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "create":
		if len(rest) != 1 {
			return usagef("name the agent: console token create helpdesk-bot")
		}
		return tokenCreate(ctx, e, db, rest[0])
	case "list", "ls":
		if len(rest) != 0 {
			return usagef("token list takes no arguments")
		}
		return tokenList(ctx, e, db, asJSON)
	case "revoke":
		if len(rest) != 1 {
			return usagef("name the token to revoke: console token revoke helpdesk-bot")
		}
		return tokenRevoke(ctx, e, db, rest[0])
	}
	return usagef("unknown subcommand %q: console token create NAME | list | revoke NAME", args[0])
}

func tokenCreate(ctx context.Context, e env, db, name string) error {
	if !tokenName.MatchString(name) {
		return usagef("%q is not a token name: use 1 to 64 letters, digits, dots, hyphens or underscores, e.g. helpdesk-bot", name)
	}
	store, err := models.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	token, err := tools.NewToken()
	if err != nil {
		return err
	}
	if _, err := store.CreateToken(ctx, name, tools.HashToken(token)); err != nil {
		if errors.Is(err, models.ErrDuplicate) {
			return usagef("a token named %q already exists; revoke it first or pick another name", name)
		}
		return err
	}
	if err := store.RecordAudit(ctx, models.Audit{Actor: actor(), Action: "token.create", Target: name, After: "active"}); err != nil {
		return err
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
	store, err := models.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	toks, err := store.ListTokens(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]tokenJSON, len(toks))
		for i, t := range toks {
			out[i] = tokenJSON{t.Name, t.CreatedAt.UTC(), t.LastUsedAt, t.RevokedAt}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
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
			state = "revoked " + t.RevokedAt.Local().Format("2006-01-02 15:04")
		}
		if t.LastUsedAt != nil {
			used = t.LastUsedAt.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.CreatedAt.Local().Format("2006-01-02 15:04"), used, state)
	}
	return tw.Flush()
}

func tokenRevoke(ctx context.Context, e env, db, name string) error {
	store, err := models.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.RevokeToken(ctx, name); err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return usagef("there is no active token named %q; see console token list", name)
		}
		return err
	}
	if err := store.RecordAudit(ctx, models.Audit{Actor: actor(), Action: "token.revoke", Target: name, Before: "active", After: "revoked"}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked %s\n", name)
	return nil
}
