package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
)

// runTool calls one tool of the registry, fetch_url, call_integration or
// an integration's own tool, through the same call path as MCP and the
// API: the input is checked against the tool's schema and the call is
// recorded once. Screenshots need the browser of console serve or mcp.
func runTool(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("tool", &db)
	fs.BoolVar(&asJSON, "json", false, "print the API's JSON answer")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) < 1 || len(rest) > 2 {
		return usagef(`give a tool and its input as one JSON object: console tool fetch_url '{"url": "https://status.example.com/"}'`)
	}
	input := "{}"
	if len(rest) == 2 {
		input = rest[1]
	}
	if !json.Valid([]byte(input)) {
		return usagef("the input %s is not JSON; write it as one object in single quotes, e.g. '{\"url\": \"https://status.example.com/\"}'", input)
	}
	a, err := openApp(ctx, db, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	reg := tools.Builtin(tools.Deps{Guard: a.Guard(), Settings: a.Settings, Integrations: a.Integrations()})
	res, err := reg.Call(ctx, tools.Call{Tool: rest[0], Turn: tools.Turn{Agent: actor(), Thread: "cli"}, Args: json.RawMessage(input), From: "input"})
	var unknown *tools.UnknownToolError
	if errors.As(err, &unknown) {
		return usagef("there is no tool %s here; use one of: %s (take_screenshot runs under console serve or console mcp)", unknown.Name, strings.Join(unknown.Known, ", "))
	}
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res.API); err != nil {
			return err
		}
	} else {
		fmt.Fprint(e.stdout, res.Text)
	}
	if !res.OK() {
		return refusedError{}
	}
	return nil
}
