package main

import (
	"context"
	"encoding/json"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
)

func runFetch(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	start := 0
	fs := newFlags("fetch", &db)
	fs.BoolVar(&asJSON, "json", false, "print the API's JSON answer")
	fs.Var(boundedInt{&start, "start", 0, "pass 0 or the number a previous part gave"}, "start", "the character `N` to start from, to read on where a previous part stopped")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("give exactly one URL: console fetch [--json] [--start N] URL")
	}
	a, err := openApp(ctx, db, app.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer a.Close()
	// The same registry call path as MCP and the API: the call is checked
	// against the tool's schema and recorded once.
	reg := tools.Builtin(tools.Deps{Guard: a.Guard(), Settings: a.Settings})
	input, err := json.Marshal(map[string]any{"url": rest[0], "start": start})
	if err != nil {
		return err
	}
	res, err := reg.Call(ctx, tools.Call{Tool: tools.FetchURLName, Turn: tools.Turn{Agent: actor(), Thread: "cli"}, Args: input, From: "input"})
	if err != nil {
		return err
	}
	return printToolResult(e, res, asJSON, "")
}
