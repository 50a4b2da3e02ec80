package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/web"
)

const defaultServeAddr = "127.0.0.1:8080"

func runServe(ctx context.Context, e env, args []string) error {
	var db, addr, certFile, keyFile, publicURL string
	var cfg serveConfig
	fs := newFlags("serve", &db)
	fs.StringVar(&addr, "addr", defaultServeAddr, "the address to listen on, as `HOST:PORT`; loopback only, unless --public")
	fs.BoolVar(&cfg.public, "public", false, "allow an --addr beyond loopback, where other machines can reach the console")
	fs.StringVar(&certFile, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) `file`; needs --tls-key")
	fs.StringVar(&keyFile, "tls-key", "", "the PEM private key `file` of --tls-cert")
	fs.StringVar(&publicURL, "public-url", "", "the `URL` people open the console at, such as https://console.example.com behind a TLS proxy")
	fs.Var((*prefixList)(&cfg.trusted), "trusted-proxy", "a reverse proxy's IP or `CIDR` whose X-Forwarded-For and X-Forwarded-Proto count; repeatable")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("serve takes no arguments: console serve [--addr 127.0.0.1:8080] [--db console.db]")
	}
	if err := checkPublicAddr(addr, defaultServeAddr, cfg.public,
		"the console's sign-in page, its API and MCP would be reachable from the network",
		", ideally with --tls-cert and --tls-key, or behind a TLS proxy with --public-url https://NAME"); err != nil {
		return err
	}
	if cfg.cert, err = loadServeCert(certFile, keyFile); err != nil {
		return err
	}
	if cfg.publicURL, err = parsePublicURL(publicURL); err != nil {
		return err
	}
	l, err := listen(addr, defaultServeAddr)
	if err != nil {
		return err
	}
	if host, _, _ := net.SplitHostPort(addr); !isLoopbackHost(host) {
		fmt.Fprintf(e.stderr, "Warning: --addr %s is not a loopback address: the console's sign-in page, its API and MCP are reachable from the network (--public).\n", addr)
	}
	return serveWith(ctx, e, db, l, cfg)
}

// serve runs the console on l with plain HTTP and no public URL.
func serve(ctx context.Context, e env, db string, l net.Listener) error {
	return serveWith(ctx, e, db, l, serveConfig{})
}

// serveWith runs the console on l until ctx ends, then shuts down gracefully:
// requests in flight finish, and every refusal still queued is written.
func serveWith(ctx context.Context, e env, db string, l net.Listener, cfg serveConfig) (err error) {
	// One line a request: written in batches (log_batch.go). Closed after
	// the app, whose Close may still log.
	stderr := newBatchedLog(e.stderr)
	defer stderr.Close()
	e.stderr = stderr
	log := jsonLog(e.stderr)
	metrics := web.NewMetrics()
	a, err := openApp(ctx, db, app.Options{Log: log, DecisionLog: e.stderr, Metrics: metrics, ReloadLag: metrics.ReloadLagObserver()})
	if err != nil {
		l.Close()
		return err
	}
	// Close's error says what the stop left out of the database (and
	// where it was kept): serve exits non-zero then, as proxy does.
	defer func() { err = errors.Join(err, a.Close()) }()
	for _, w := range a.LogWriterStats() { // one log label each: refusals, decisions, would_refuse
		metrics.WatchLogWriter(w.Log, a.LogWriterStatsOf(w.Log))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	metrics.TrackReloads(a.ReloadStatus)
	go a.Watch(ctx)
	go a.PurgeLoop(ctx)
	warnBrowserBroken(log, a.Settings().Browser)

	agents := a
	shots, stopShots, err := a.Screenshots()
	if err != nil {
		return err
	}
	defer stopShots()
	tabs := tools.NewTabs(shots, a.Settings) // the browser_* tools, offered while the browser setting is on
	defer tabs.Close()
	// One registry serves MCP and the API, so both share the page cache,
	// the turn budget and one turn counter per MCP session. Which
	// conversations have read the web is kept in the database: behind a
	// load balancer a thread's next call may reach another replica.
	reg := tools.Builtin(tools.Deps{Guard: a.Guard(), Settings: a.Settings, Shots: shots, Integrations: a.Integrations(), Browser: tabs, WebReads: a.WebReads()})
	users, err := a.CountUsers(ctx)
	if err != nil {
		return err
	}
	setup, err := web.ServeSetupToken(ctx, a.Store(), users > 0)
	if err != nil {
		return err
	}
	srv := web.New(web.Deps{
		Store: a.Store(), Guard: a.Guard(), Settings: a.Settings,
		MCP:      tools.MCPHandler(reg.MCPServer(buildVersion(), ""), agents),
		Tools:    reg.API(agents),
		Agents:   a,
		Metrics:  metrics.Handler(),
		Setup:    setup,
		SignIns:  a.Store(),
		Reloads:  a,
		Log:      log,
		Config:   a,
		Identity: a,
		Refusals: a,
		Tickets:  a,
		Preview:  a.Previews(reg),
		// Every log writer's state, for /healthz and the log's banner.
		LogWriters: a.LogWriterStats,
		// The console answers only the address it is bound to, loopback
		// names on its port and the name --addr gave (web/hostcheck.go).
		// and the public URL's name.
		Listen:       l.Addr(),
		AllowedHosts: listenHosts(l),
		PublicURL:    cfg.publicURL,
		// Only these peers' X-Forwarded-For and X-Forwarded-Proto count.
		TrustedProxies: cfg.trusted,
	})
	hs := srv.HTTPServer(web.DefaultTimeouts())
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	if cfg.cert != nil {
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cfg.cert}, MinVersion: tls.VersionTLS12}
	}
	base := consoleURL(l.Addr(), cfg.cert != nil, cfg.publicURL)
	fmt.Fprintf(e.stderr, "Outbound console on %s (database %s)\n", base, models.DisplayName(db))
	if setup.Value() != "" {
		fmt.Fprintf(e.stderr, "No user exists yet. Create the first admin here (the link works once):\n  %s/setup?token=%s\n", base, setup.Value())
	}
	errc := make(chan error, 1)
	go func() {
		if cfg.cert != nil {
			errc <- hs.ServeTLS(l, "", "") // the certificate is in hs.TLSConfig
			return
		}
		errc <- hs.Serve(l)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, stop := context.WithTimeout(context.Background(), 15*time.Second)
	defer stop()
	if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(e.stderr, "Outbound console stopped.")
	return nil
}

// jsonLog is the log of the long-running commands that agents and
// collectors talk to (serve, mcp): one JSON object a line on stderr, from
// Info up, so a log shipper reads both the same way.
func jsonLog(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
