package main

import (
	"context"
	"encoding/json"
	"fmt"

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
	f := tools.NewFetcher(a.Guard(), a.Settings)
	res := f.Fetch(ctx, tools.Turn{Agent: actor(), Thread: "cli"}, tools.FetchInput{URL: rest[0], Start: start})
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res.JSON()); err != nil {
			return err
		}
	} else {
		fmt.Fprint(e.stdout, res.Answer())
	}
	if !res.OK() {
		return refusedError{}
	}
	return nil
}
