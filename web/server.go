// Package web is the console's HTTP server: Echo routes that turn requests
// into view models for views/ and changes into calls of the application
// layer (internal/app), through the small interfaces declared here. It is the product's
// front door, so everything here is a plain form first (Post/Redirect/Get,
// no script required), every change is checked on the server for the
// signed-in user's role, and every form carries a CSRF token.
package web

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

//go:embed static
var staticFiles embed.FS

// Decider decides a URL without fetching it: the Test a URL box.
type Decider interface {
	Decide(ctx context.Context, url string) guard.Decision
}

// Deps is what the console needs from the process that runs it.
type Deps struct {
	Store Store
	Guard Decider
	// Settings returns the settings in force.
	Settings func() tools.Settings
	// MCP and Tools are mounted as they are; they check agents' tokens.
	// Tools serves every registered tool at /api/v1/tools/<name>.
	MCP   http.Handler
	Tools ToolAPI
	// Agents checks agents' API tokens (for /metrics); *app.App
	// implements it. Without it only a signed-in admin reads /metrics.
	Agents tools.Agents
	// Metrics serves /metrics to an agent's bearer token (a Prometheus
	// scraper) or a signed-in admin.
	Metrics http.Handler
	// Setup is the one-time first-run link token; empty once a user exists.
	Setup *SetupToken
	Log   *slog.Logger
	Now   func() time.Time
	// Identity runs the operations on agents' tokens and console users
	// (the application layer; services_identity.go says which). The
	// Agents, Users, setup and Account pages need it; sign-in does not.
	Identity Identity

	// Config runs every configuration change the console makes (allowlist,
	// settings, HTTP integrations): validate, store with its audit record,
	// reload. *app.App implements it.
	Config ConfigService

	// Refusals saves reviews of the refusal log, audited.
	Refusals RefusalReviewer
	// Tickets reads tickets' timelines. *app.App implements it.
	Tickets TicketTimelines

	// Preview reads a link for a person through the tool registry (the
	// safe preview); without it the page says none runs here.
	Preview Previewer

	// LogWriters reports every log writer's state (refusals, allowed
	// decisions, would-be refusals: queue, spill file, stall, drops) for
	// /healthz and the log's banner; nil: none.
	LogWriters func() []models.NamedWriterStats

	// Listen is the address the console's listener is bound to, and
	// AllowedHosts the further names (or host:port) it answers to; any
	// other Host gets 421 (hostcheck.go says why and which). Without
	// Listen, only loopback names and addresses are answered, on any port.
	Listen       net.Addr
	AllowedHosts []string

	// PublicURL is where people open the console (serve --public-url), or
	// nil. Its https scheme makes cookies Secure and __Host- even when TLS
	// ends at a reverse proxy (forwarded.go).
	PublicURL *url.URL
	// TrustedProxies are the peers whose X-Forwarded-For (the client's
	// address, for the sign-in throttle) and X-Forwarded-Proto count;
	// from anyone else, and by default from everyone, they are ignored.
	TrustedProxies []netip.Prefix

	// SignIns, when set, keeps the sign-in throttle's failures in the
	// database, shared by every replica; nil keeps them in this process.
	SignIns SignInFailures
	// Reloads, when set, is this replica's reload state, which /healthz
	// reports (*app.App).
	Reloads ReloadReporter
}

// Server is the console.
type Server struct {
	*echo.Echo
	d        Deps
	throttle *loginThrottle
	hosts    *hostCheck
	// overview keeps the Overview's closed hours and days between loads.
	overview *models.OverviewCache
	// topHosts keeps the refusal log's most refused hosts between loads.
	topHosts topHostsCache
	// facets keeps the refusal log's filter menus between loads.
	facets facetsCache
}

// New builds the console: its middleware and, in this one function, every
// route it serves, so a reader sees the whole surface in one place.
func New(d Deps) *Server {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// Client addresses from headers would let anyone dodge the sign-in
	// throttle by inventing one, so only a trusted proxy's count.
	e.IPExtractor = clientIP(d.TrustedProxies)
	s := &Server{Echo: e, d: d, throttle: newLoginThrottle(d.Now, d.SignIns), hosts: newHostCheck(d.Listen, d.AllowedHosts, d.PublicURL),
		overview: models.NewOverviewCache(overviewCacheTTL)}
	e.HTTPErrorHandler = s.handleError

	e.Use(middleware.Recover())
	e.Use(s.securityHeaders)
	e.Use(s.markHTTPS)
	// Before anything reads the request: the Host check, then the body
	// limits (limits.go), ahead of the CSRF check that parses forms.
	e.Use(s.checkHost)
	e.Use(s.requestLog)
	e.Use(s.limitBody)

	static, _ := fs.Sub(staticFiles, "static")
	e.GET("/static/*", echo.WrapHandler(http.StripPrefix("/static/", http.FileServer(http.FS(static)))))
	// Browsers ask for /favicon.ico on their own, with no session and
	// before any page says where the icon is.
	e.GET("/favicon.ico", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/static/favicon.svg") })
	e.GET("/healthz", s.healthz)
	if d.Metrics != nil {
		e.GET("/metrics", echo.WrapHandler(d.Metrics), s.loadSession, s.requireScraper)
	}
	if d.MCP != nil {
		e.Any("/mcp", echo.WrapHandler(d.MCP), streamMCP)
	}
	if d.Tools != nil {
		e.Any(toolsPrefix+":name", s.toolAPI)
	}
	// Any other /api/ path is a JSON 404, outside the CSRF group below.
	e.Any("/api/*", s.apiNotFound)

	// Everything below is the browser console: the CSRF check on every
	// change, and a session on every route except sign-in and setup.
	// Its CSRF check (csrf.go) needs the session, so it runs second.
	ui := e.Group("", s.loadSession, s.checkCSRF)
	ui.GET("/", s.home)
	ui.GET("/login", s.loginPage)
	ui.POST("/login", s.login)
	ui.GET("/setup", s.setupPage)
	ui.POST("/setup", s.setup)

	signed := ui.Group("", s.requireUser)
	signed.POST("/logout", s.logout)
	signed.GET("/account", s.accountPage)
	signed.POST("/account/password", s.changePassword)
	// signed is for every signed-in user, admin for admins only; each
	// handler lives in its feature's file.
	admin := signed.Group("", s.requireAdmin)

	signed.GET("/integrations", s.integrationsPage) // Outbound web access
	signed.GET("/integrations/test", s.testURL)
	admin.GET("/integrations/allow", s.allowFromRefusal)
	admin.POST("/integrations/allowlist", s.addAllowlist)
	admin.POST("/integrations/allowlist/remove", s.removeAllowlist)
	admin.POST("/integrations/allowlist/enforce", s.enforceAllowlist)
	signed.GET("/integrations/report-only", s.wouldRefusalsPage)
	signed.POST("/integrations/access/request", s.requestAccess)
	admin.POST("/integrations/access/:id/approve", s.approveAccess)
	admin.POST("/integrations/access/:id/decline", s.declineAccess)
	admin.POST("/integrations/allowlist/remove-selected", s.removeSelected)
	admin.GET("/integrations/allowlist/note", s.noteForm)
	admin.POST("/integrations/allowlist/note", s.saveNote)

	signed.GET("/integrations/http", s.integrationList)
	admin.GET("/integrations/http/new", s.integrationNew)
	admin.POST("/integrations/http/new", s.integrationCreate)
	admin.GET("/integrations/http/:name", s.integrationEdit)
	admin.POST("/integrations/http/:name", s.integrationUpdate)
	admin.POST("/integrations/http/:name/test", s.integrationTest)
	admin.POST("/integrations/http/:name/delete", s.integrationDelete)

	signed.GET("/refusals", s.refusalLog)
	signed.GET("/refusals.csv", s.refusalCSV)
	signed.GET("/refusals/:id", s.refusalDetail)
	signed.GET("/tickets", s.ticketLookup)
	signed.GET("/tickets/:id", s.ticketTimeline)
	signed.POST("/refusals/:id/review", s.reviewRefusal)
	signed.GET("/overview", s.overviewPage)
	signed.GET("/preview", s.previewPage)
	signed.POST("/preview", s.preview)
	signed.POST("/refusals/review", s.reviewSelected)

	admin.GET("/agents", s.agentsPage)
	admin.POST("/agents", s.createToken)
	admin.GET("/agents/new/:view", s.newTokenPage)
	admin.POST("/agents/revoke", s.revokeToken)

	admin.GET("/users", s.usersPage)
	admin.POST("/users", s.addUser)
	admin.GET("/users/:id", s.userPage)
	admin.POST("/users/:id/role", s.setUserRole)
	admin.POST("/users/:id/password", s.resetPassword)
	admin.POST("/users/:id/remove", s.removeUser)

	admin.GET("/settings", s.settingsPage)
	admin.POST("/settings", s.saveSettings)
	admin.GET("/audit", s.auditPage)
	return s
}

func (s *Server) healthz(c echo.Context) error {
	body, stale, err := replicaHealth(c.Request().Context(), s.d.Store, s.d.Reloads, s.d.Now())
	if err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": "the database cannot be read"})
	}
	code := http.StatusOK
	if states := s.logWriterStates(); states != nil {
		var writers map[string]any
		writers, code = logWritersHealth(states, s.d.Now())
		body["log_writers"], body["refusal_log"] = writers, writers["refusals"]
		for _, w := range writers {
			if state := w.(map[string]any)["state"]; state != "ok" && state != "draining" {
				body["status"] = "degraded"
			}
		}
	}
	if stale {
		body["status"], code = "stale", http.StatusServiceUnavailable
	}
	return c.JSON(code, body)
}

// The security headers' values, shared by every response.
var (
	contentSecurityPolicy = []string{"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"}
	noSniff               = []string{"nosniff"}
	sameOrigin            = []string{"same-origin"}
	denyFrames            = []string{"DENY"}
)

func (s *Server) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		// The keys are canonical and each value a one-element slice that
		// net/http only reads (an Add appends past its capacity, to a
		// copy): set directly, a response allocates none of them.
		h["Content-Security-Policy"] = contentSecurityPolicy
		h["X-Content-Type-Options"] = noSniff
		h["Referrer-Policy"] = sameOrigin
		h["X-Frame-Options"] = denyFrames
		return next(c)
	}
}

func (s *Server) requestLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// Off by default: without debug logging, a request pays neither
		// the clock nor the boxing of the line's values.
		if !s.d.Log.Enabled(c.Request().Context(), slog.LevelDebug) {
			if err := next(c); err != nil {
				c.Error(err)
			}
			return nil
		}
		start := s.d.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		path := c.Request().URL.Path
		if path == "/healthz" || path == "/metrics" || len(path) > 7 && path[:8] == "/static/" {
			return nil
		}
		s.d.Log.Debug("http", "method", c.Request().Method, "path", path, "status", c.Response().Status, "ms", s.d.Now().Sub(start).Milliseconds())
		return nil
	}
}
