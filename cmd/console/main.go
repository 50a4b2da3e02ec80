// Command console runs Outbound: the egress guard's command line, the web
// console, the MCP server and the egress proxy, all over one database: a
// SQLite file, or PostgreSQL for several replicas.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// env is what a command may touch: its streams. Commands take it rather
// than os.Stdout so that tests run them in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

type command struct {
	summary string
	// usage is the command's form, one line per subcommand, without the
	// leading "console ".
	usage string
	run   func(ctx context.Context, e env, args []string) error
}

// commands is every command, registered here and nowhere else, so that
// `console help` and a reader see the whole command line in one place.
var commands = map[string]command{
	"serve":        {summary: "run the web console, /mcp, /api/v1 and /metrics", usage: "serve [--addr 127.0.0.1:8080] [--public] [--tls-cert FILE --tls-key FILE] [--public-url URL] [--trusted-proxy CIDR]...", run: runServe},
	"init":         {summary: "create the database and its secret key file (serve creates them too)", usage: "init [--db PATH]", run: runInit},
	"migrate":      {summary: "bring the database's schema up to this binary's version (--status: only say)", usage: migrateUsage, run: runMigrate},
	"check":        {summary: "decide a URL without fetching it (exit 0 allowed, 3 refused), or say what an agent and tool may reach", usage: "check [--agent NAME] [--tool TOOL] [--json] URL\ncheck --agent NAME [--tool TOOL] [--json]", run: runCheck},
	"fetch":        {summary: "read a URL exactly as an agent's fetch_url would (exit 3 if refused)", usage: "fetch [--json] [--start N] URL", run: runFetch},
	"allow":        {summary: "manage the outbound allowlist: add, rm, enforce, list", usage: allowUsage, run: runAllow},
	"settings":     {summary: "show and change limits: settings list, settings set KEY VALUE", usage: settingsUsage, run: runSettings},
	"integrations": {summary: "manage HTTP integrations: list, show, add, rm, test", usage: integrationsUsage, run: runIntegrations},
	"refusals":     {summary: "show the refusal log, newest first", usage: "refusals [--limit N] [--kind policy|network] [--ticket ID] [--search WORDS] [--would-refuse] [--json]", run: runRefusals},
	"ticket":       {summary: "show a ticket's timeline: every decision its agents' calls met, allowed and refused, in order", usage: "ticket [--json] ID", run: runTicket},
	"token":        {summary: "manage agents' API tokens: token create NAME, token list, token revoke NAME", usage: tokenUsage, run: runToken},
	"user":         {summary: "manage console users: user add, user list, user rm NAME, user passwd NAME (passwords on stdin)", usage: userUsage, run: runUser},
	"mcp":          {summary: "serve the agent tools over MCP on stdio", usage: "mcp [--agent NAME]", run: runMCP},
	"tool":         {summary: "call any agent tool exactly as an agent would (exit 3 if refused)", usage: `tool [--json] [--out FILE.png] NAME ['{"url": "…"}']`, run: runTool},
	"doctor":       {summary: "check the database and the browser set-up, and print the fix for each broken piece", usage: "doctor [--db PATH] [--no-launch]", run: runDoctor},
	"version":      {summary: "print the build version (the MCP server reports the same)", usage: "version", run: runVersion},
	"proxy":        {summary: "run the guarded HTTP proxy for agents in any language", usage: "proxy [--addr 127.0.0.1:4750] [--public]", run: runProxy},
}

// refusedError makes a command exit with code 3: the guard refused.
type refusedError struct{}

func (refusedError) Error() string { return "refused" }

func main() {
	tuneGCForThisProcess()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, env{os.Stdin, os.Stdout, os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code: 0 success,
// 1 failure, 2 usage error, 3 refused by the guard. Help asked for goes to
// stdout with 0; a bare `console` is a mistake, so its usage goes to
// stderr with 2.
func run(ctx context.Context, e env, args []string) int {
	switch {
	case len(args) == 0:
		fmt.Fprint(e.stderr, usage())
		return 2
	case args[0] == "help" && len(args) == 2:
		return run(ctx, e, []string{args[1], "--help"})
	case args[0] == "help" && len(args) > 2:
		fmt.Fprintf(e.stderr, "console help: name one command, e.g. console help check\n")
		return 2
	case args[0] == "help" || isHelpArg(args[0]):
		fmt.Fprint(e.stdout, usage())
		return 0
	}
	name := args[0]
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(e.stderr, "console: unknown command %q\n\n%s", name, usage())
		return 2
	}
	err := cmd.run(ctx, e, args[1:])
	var ue *usageError
	var help *helpRequest
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		fmt.Fprint(e.stdout, commandHelp(name, cmd, help))
		return 0
	case errors.As(err, &refusedError{}):
		return 3
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "console %s: %s\n", name, safeText(cliText(err.Error())))
		return 2
	default:
		// An error may quote a server or an argument: safeText.
		fmt.Fprintf(e.stderr, "console %s: %s\n", name, safeText(cliText(err.Error())))
		return 1
	}
}

func usage() string {
	var b strings.Builder
	b.WriteString("usage: console COMMAND [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	width := 0
	for n := range commands {
		names = append(names, n)
		width = max(width, len(n))
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-*s %s\n", width, n, commands[n].summary)
	}
	b.WriteString("\nEvery command takes --db PATH or --db postgres://… (env CONSOLE_DB, default console.db).\n")
	b.WriteString("Run console help COMMAND (or console COMMAND --help) for its flags.\n")
	return b.String()
}
