package main

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
)

// runMCP serves MCP on stdin and stdout. Nothing but protocol may reach
// stdout, so every log line goes to stderr. The agent is the person who
// started the process; the thread is the MCP session.
func runMCP(ctx context.Context, e env, args []string) (err error) {
	var db, agent string
	fs := newFlags("mcp", &db)
	fs.StringVar(&agent, "agent", actor(), "the agent `name` recorded with refusals")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("mcp takes no arguments; configure it in your MCP client as: console mcp --db PATH")
	}
	// Two writers share stderr: the log's JSON handler and the decision
	// lines (DecisionLog). Each writes a whole line in one Write, and the
	// process's stderr is an *os.File, which holds its write lock until
	// every byte of a Write is out, so their lines never interleave,
	// however long. (Tests that hand in a buffer have one writer; serve
	// and proxy route both through one batchedLog, for its fewer writes.)
	log := jsonLog(e.stderr)
	a, err := openApp(ctx, db, app.Options{Log: log, DecisionLog: e.stderr, MustExist: true})
	if err != nil {
		return err
	}
	// Close's error says what the stop left out of the database (and
	// where it was kept): mcp exits non-zero then, as serve and proxy do.
	defer func() { err = errors.Join(err, a.Close()) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go a.Watch(ctx)
	warnBrowserBroken(log, a.Settings().Browser)
	shots, stopShots, err := a.Screenshots()
	if err != nil {
		return err
	}
	defer stopShots()
	tabs := tools.NewTabs(shots, a.Settings) // the browser_* tools, offered while the browser setting is on
	defer tabs.Close()
	reg := tools.Builtin(tools.Deps{Guard: a.Guard(), Settings: a.Settings, Shots: shots, Integrations: a.Integrations(), Browser: tabs})
	server := reg.MCPServer(buildVersion(), agent)
	err = server.Run(ctx, &mcp.IOTransport{Reader: nopCloser{e.stdin}, Writer: nopWriteCloser{e.stdout}})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// nopCloser and nopWriteCloser hand the process's streams to the MCP
// transport without letting it close them under the rest of the program.
type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
