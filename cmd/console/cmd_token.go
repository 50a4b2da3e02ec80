package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

var tokenName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$`)

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
	if !tokenName.MatchString(name) {
		return usagef("%q is not a token name: use 1 to 64 letters, digits, dots, hyphens or underscores, e.g. helpdesk-bot", name)
	}
	store, err := openStore(db, mayCreate)
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
			return usagef("a token named %q already exists (revoked tokens keep their name, for the record); pick another name, e.g. %s-2", name, name)
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
	store, err := openStore(db, mustExist)
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
	store, err := openStore(db, mustExist)
	if err != nil {
		return err
	}
	defer store.Close()
	toks, err := store.ListTokens(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(toks, func(t models.AgentToken) bool { return t.Name == name })
	switch {
	case i < 0:
		return usagef("there is no token named %q; see console token list", name)
	case toks[i].RevokedAt != nil:
		return usagef("the token %q is already revoked (since %s); nothing changed", name, toks[i].RevokedAt.Local().Format("2006-01-02 15:04"))
	}
	if err := store.RevokeToken(ctx, name); err != nil {
		if errors.Is(err, models.ErrNotFound) {
			return usagef("there is no token named %q; see console token list", name)
		}
		return err
	}
	if err := store.RecordAudit(ctx, models.Audit{Actor: actor(), Action: "token.revoke", Target: name, Before: "active", After: "revoked"}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked %s\n", name)
	return nil
}
