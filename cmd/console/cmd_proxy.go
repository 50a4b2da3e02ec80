package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/web"
)

const defaultProxyAddr = "127.0.0.1:4750"

// proxyShutdownGrace is how long requests in flight may finish after
// SIGINT or SIGTERM before the proxy closes them.
const proxyShutdownGrace = 10 * time.Second

// runProxy serves the guard as an HTTP proxy, so an agent written in any
// language reaches the web only through the guard by setting its proxy.
// Agents authenticate with their API token as the Basic password; the
// refusal log names the token as the agent. Allowlist and settings
// changes made by any process apply within a second, through the watch.
func runProxy(ctx context.Context, e env, args []string) (err error) {
	var db, addr string
	var public bool
	fs := newFlags("proxy", &db)
	fs.StringVar(&addr, "addr", defaultProxyAddr, "the address to listen on, as `HOST:PORT`; loopback only, unless --public")
	fs.BoolVar(&public, "public", false, "allow an --addr beyond loopback, where other machines can reach the proxy")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("proxy takes no arguments; choose the address with --addr HOST:PORT")
	}
	if err := checkProxyAddr(addr, public); err != nil {
		return err
	}
	// One line a request: written in batches (log_batch.go). Closed after
	// the app, whose Close may still log.
	stderr := newBatchedLog(e.stderr)
	defer stderr.Close()
	e.stderr = stderr
	log := jsonLog(e.stderr)
	a, err := openApp(ctx, db, app.Options{Log: log, DecisionLog: e.stderr, MustExist: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, a.Close()) }() // flushes the refusals still queued
	proxy, err := standaloneProxy(a)
	if err != nil {
		return err
	}
	ln, err := listen(addr, defaultProxyAddr)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "console proxy: listening on http://%s\n", ln.Addr())
	fmt.Fprintf(e.stderr, "  try: curl -x http://agent:$TOKEN@%s https://example.com/   (TOKEN from: console token create NAME)\n", ln.Addr())

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go a.Watch(watchCtx)

	srv := proxyServer(withHealthz(proxy, web.HealthzHandler(a.Store(), a)), proxyTimeouts())
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("the proxy stopped serving: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(e.stderr, "console proxy: shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), proxyShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
	}
	_ = proxy.Close()
	<-served
	return nil
}

// withHealthz answers a plain GET /healthz (origin-form: a proxied
// request names its target's scheme and host, a CONNECT its host) with
// health, so a load balancer in front of several proxies can take out
// one that cannot read the database or load a stored change; every other
// request goes to proxy.
func withHealthz(proxy, health http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Host == "" && r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			health.ServeHTTP(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// proxyTimeouts are the standalone proxy's server limits. A proxied
// request (its upload and its answer) is bounded by the guard's timeout
// setting, at most guard.MaxTimeout, so Read and Write allow that and a
// minute more: they cut a trickled request or a stalled reader, never a
// request the guard still allows. A CONNECT tunnel is not bound by them:
// the proxy hijacks its connection, and net/http clears a hijacked
// connection's deadlines (TestProxyServerLimits checks both).
func proxyTimeouts() web.Timeouts {
	return web.Timeouts{
		ReadHeader:     10 * time.Second,
		Read:           guard.MaxTimeout + time.Minute,
		Write:          guard.MaxTimeout + time.Minute,
		Idle:           90 * time.Second,
		MaxHeaderBytes: 64 << 10,
	}
}

// proxyServer is the standalone proxy's http.Server with the limits t.
func proxyServer(h http.Handler, t web.Timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    t.MaxHeaderBytes,
	}
}

// standaloneProxy is the guard's proxy with agents' API tokens as its
// credentials.
func standaloneProxy(a *app.App) (*guard.Proxy, error) {
	return a.Guard().NewProxy(guard.ProxyOptions{
		Authenticate:      (&tokenAuth{agents: a}).authenticate,
		AuthHint:          "Use an agent's API token (console token create NAME) as the password; any user name will do.",
		AcceptTicket:      true, // agents name the ticket a request serves with X-Outbound-Ticket
		CredentialRecheck: tunnelTokenRecheck,
	})
}

// tunnelTokenRecheck is how often the tokens of open CONNECT tunnels are
// verified again. Tokens are revoked by other processes (the console,
// `console token revoke`), and nothing tells this one: a revoked token's
// next request is refused within VerifyToken's 100 ms, but a tunnel it
// holds is a request that has already come. A second bounds how long
// such a tunnel outlives its token, at one lookup a second for each token
// that holds tunnels (however many), not one per 100 ms.
const tunnelTokenRecheck = time.Second

// checkProxyAddr refuses an address beyond loopback unless --public says
// that is meant: whoever reaches the proxy with a token reaches whatever
// the allowlist unlocks, from this machine's place in the network.
func checkProxyAddr(addr string, public bool) error {
	return checkPublicAddr(addr, defaultProxyAddr, public,
		"the proxy would be reachable from the network, and anyone there holding a token could use this machine's allowlist", "")
}

// tokenAuth checks agents' API tokens for the proxy. VerifyToken trusts
// a token it has just verified for 100 ms (internal/app/token_cache.go),
// so the hundred requests of one page do not each query the store, while
// a revoked token stops working within the bound every change keeps.
type tokenAuth struct {
	agents tools.Agents
}

func (t *tokenAuth) authenticate(ctx context.Context, _, token string) (guard.Caller, error) {
	name, err := t.agents.VerifyToken(ctx, token)
	if errors.Is(err, tools.ErrBadToken) {
		return guard.Caller{}, guard.ErrProxyCredential
	}
	if err != nil {
		return guard.Caller{}, err
	}
	return guard.Caller{Tool: "proxy", Agent: name}, nil
}
