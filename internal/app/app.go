// Package app is Outbound's application layer: the one owner of every
// operation the product performs. The web console and the command line are
// thin front ends over it: they parse input, call an operation here, and
// render or print what it returns. Keeping the rules (what a valid entry,
// token name or password is; what is audited, and under which action name;
// when the running guard reloads) in one place is what stops the two front
// ends drifting apart.
//
// An App wires the store to the guard: the store's allowlist and settings
// become the guard's policy, the guard's decisions go to the log, the
// metrics and the store's batched refusal writer, and a change made by any
// process on the same database reaches this one through the revision number.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// App is one running Outbound process's view of its database and guard.
type App struct {
	store *models.Store
	// decisionLog is Options.DecisionLog (record_line.go).
	decisionLog io.Writer
	guard       *guard.Guard
	refusals    refusalRows
	// would keeps the requests report-only entries would have refused;
	// nil where nothing records (a test's bare App).
	would   *models.WouldRefusalWriter
	uses    *tokenUses   // agents' token uses, written in the background
	tokens  tokenCache   // verified tokens, for tokenCacheFor
	lookups tokenLookups // cache misses of one token share one store lookup
	metrics guard.Recorder
	log     *slog.Logger
	// secrets seals integration header secrets; integrations runs them.
	secrets      *tools.SecretBox
	integrations *tools.Integrations

	onReload func(error)

	reloadLag func(time.Duration)

	settings atomic.Pointer[tools.Settings]
	revision atomic.Int64
	reloadMu sync.Mutex

	reloadState reloadState

	// passwordCost is bcrypt's cost for new password hashes (identity.go).
	passwordCost int

	// decisions keeps allowed decisions for tickets' timelines (decisions.go).
	decisions decisionRows
}

// Options configure Open.
type Options struct {
	// Resolver replaces the system resolver (tests inject one).
	Resolver guard.Resolver
	// Dial replaces the network for the guard's connections (tests route
	// public-looking addresses to loopback servers with it).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Metrics counts every decision record (web.Metrics); nil counts none.
	Metrics guard.Recorder
	// Log receives the one line per decision and the app's own events.
	Log *slog.Logger
	// DecisionLog, if set, is the writer under Log's JSON handler: the
	// decision lines are then written to it directly, the same lines the
	// handler would write, without its cost (record_line.go). Only Log's
	// level still decides whether they are written.
	DecisionLog io.Writer
	// ReadOnly is for commands that only decide or fetch (check, fetch):
	// the database must already exist, and the integrations are not
	// loaded, so their secret key file is neither needed nor created.
	ReadOnly bool
	// PasswordCost is bcrypt's cost for new password hashes; zero means
	// bcrypt.DefaultCost. Tests lower it.
	PasswordCost int
	// Getenv reads CONSOLE_SECRET_KEY; nil means os.Getenv.
	Getenv func(string) string
	// Repair is for commands that change the configuration and exit
	// (allow, settings): they open even when the stored allowlist or
	// settings do not load, because the change may be the fix. Such an
	// App's guard keeps its default policy until a reload succeeds, so it
	// must never be asked to decide.
	Repair bool
	// MustExist refuses a database that is not there, as ReadOnly does,
	// for a command that also needs the integrations (mcp, proxy, a tool
	// call, integrations add and test). Only the console (serve) and Init
	// create a database: anywhere else a missing one is a mistyped path.
	MustExist bool
	// OnReload, when set, is told the outcome of every reload (tests
	// count them to prove a refused change reloads nothing).
	OnReload func(error)
	// ReloadLag, when set, is told how late each change made by another
	// process came into force here (web.Metrics.ObserveReloadLag).
	ReloadLag func(time.Duration)
}

// Open opens the database at dbPath (creating it unless opts.ReadOnly or
// opts.MustExist),
// builds the guard from what it stores, and loads the integrations.
func Open(ctx context.Context, dbPath string, opts Options) (*App, error) {
	mode := MayCreate
	if opts.ReadOnly || opts.MustExist {
		mode = MustExist
	}
	store, err := OpenStoreContext(ctx, dbPath, mode)
	if err != nil {
		return nil, err
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	a := &App{store: store, log: opts.Log, decisionLog: opts.DecisionLog, metrics: opts.Metrics, onReload: opts.OnReload, reloadLag: opts.ReloadLag, passwordCost: opts.PasswordCost}
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	a.startLogWriters(dbPath)
	a.uses = newTokenUses()
	go a.runTokenUses()
	a.guard = guard.New(guard.Options{Wording: ConsoleWording, Resolver: opts.Resolver, Dial: opts.Dial, Recorder: guard.RecorderFunc(a.record)})
	if !opts.ReadOnly {
		if a.secrets, err = OpenSecretBox(dbPath, opts.Getenv); err != nil {
			a.Close()
			return nil, err
		}
		a.integrations = tools.NewIntegrations(a.guard, a.Settings)
	}
	if err := a.Reload(ctx); err != nil && !(opts.Repair && isStoredConfigError(err)) {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Reload reads the allowlist, settings and integrations and swaps them
// in together. It reads and builds everything off the live path first;
// on any failure nothing changes, the revision in force included, so the
// watch tries the same change again (the integrations used to be read
// after the revision was recorded: one that failed to load counted as
// loaded, and old integrations ran on until some later change). Reloads
// run one at a time: the revision watch and a console save can both ask
// for one, and two interleaved reloads could otherwise store the older
// configuration last. The revision is read before the configuration, so
// a change landing in between is seen as a newer revision by the next
// poll and loaded again.
func (a *App) Reload(ctx context.Context) error {
	err := a.reload(ctx)
	if a.onReload != nil {
		a.onReload(err)
	}
	return err
}

// ReloadTimeout bounds one reload. A read that does not return (a table
// locked by a migration, a half-open connection) is a reload that
// failed: without a bound the watch waited on it for good, the replica
// enforced the previous policy (perhaps wider than the stored one)
// while /healthz said "ok", and a console save waited behind it. With
// one, the watch notes the failure, /healthz takes the replica out past
// its stale limit, and the next poll tries again. A reload reads the
// allowlist, settings and integrations: milliseconds, at the
// allowlist's cap too.
const ReloadTimeout = 2 * time.Second

func (a *App) reload(ctx context.Context) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	bounded, cancel := context.WithTimeout(ctx, ReloadTimeout)
	defer cancel()
	err := a.reloadWithin(bounded)
	if err != nil && ctx.Err() == nil && errors.Is(bounded.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the configuration could not be read within %v (a lock held on its tables, or a stalled connection to the database): %w", ReloadTimeout, err)
	}
	return err
}

// reloadWithin is reload's work, with a.reloadMu held and ctx bounded.
func (a *App) reloadWithin(ctx context.Context) error {
	rev, err := a.store.Revision(ctx)
	if err != nil {
		return err
	}
	p, s, err := loadPolicy(ctx, a.store)
	if err != nil {
		return err
	}
	var integrations []tools.Integration
	if a.integrations != nil { // a read-only app runs no integration
		if integrations, err = a.readIntegrations(ctx); err != nil {
			return err
		}
	}
	if rev != a.revision.Load() {
		// The change may be a token revoked elsewhere (RevokeToken moves
		// the revision): no token this process trusts from before it is
		// trusted on, and the proxy's tunnels, checked again as the
		// policy swaps in, ask the store.
		a.tokens.clear()
	}
	a.guard.SetPolicy(p)
	a.settings.Store(&s)
	if a.integrations != nil {
		a.integrations.Set(integrations)
	}
	// Cleared before the revision is stored, so whoever sees the stored
	// revision in force never sees it failing too.
	a.noteReloadFailing(time.Time{}, nil)
	a.revision.Store(rev)
	a.noteReload(time.Now())
	return nil
}

// loadPolicy builds the guard's policy and the tools' settings from the
// store, saying which command fixes a bad stored value.
func loadPolicy(ctx context.Context, store *models.Store) (*guard.Policy, tools.Settings, error) {
	rows, err := store.ListAllowlist(ctx)
	if err != nil {
		return nil, tools.Settings{}, err
	}
	values, err := store.Settings(ctx)
	if err != nil {
		return nil, tools.Settings{}, err
	}
	p, s, err := tools.BuildPolicy(StoredRules(rows), values)
	var ee *guard.EntryError
	var se *tools.SettingError
	switch {
	case errors.As(err, &ee):
		return nil, tools.Settings{}, storedEntryError(ee)
	case errors.As(err, &se):
		return nil, tools.Settings{}, fmt.Errorf("the stored settings are invalid (%w); fix them with `console settings set`", err)
	case err != nil:
		return nil, tools.Settings{}, err
	}
	return p, s, nil
}

// Watch reloads whenever another process changes the configuration. It
// returns when ctx ends.
func (a *App) Watch(ctx context.Context) {
	a.setWatching(true)
	defer a.setWatching(false)
	// From the revision in force, not the one read when watching starts:
	// a change committed since Open's reload is then applied too.
	var failing reloadFailures
	err := a.store.WatchFrom(ctx, 250*time.Millisecond, a.revision.Load(), func(rev int64) error {
		if rev == a.revision.Load() { // loaded meanwhile (a save in this process)
			failing.recovered(a.log, rev, time.Now())
			return nil
		}
		began := time.Now()
		if err := a.Reload(ctx); err != nil {
			failing.failed(a.log, rev, err, began)
			a.noteReloadFailing(failing.since, err)
			return err // offered again at the next poll
		}
		failing.recovered(a.log, rev, time.Now())
		a.noteWatchedChange(ctx)
		a.log.Info("policy reloaded", "revision", rev)
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		a.log.Error("configuration watch stopped", "err", err)
	}
}

// Settings returns the settings in force.
func (a *App) Settings() tools.Settings { return *a.settings.Load() }

// Close flushes queued refusals and closes the store.
func (a *App) Close() error {
	if a.guard == nil { // an App over a store alone (ForStore)
		return a.store.Close()
	}
	a.guard.Close()
	a.closeTokenUses()
	return errors.Join(a.closeLogWriters(), a.store.Close())
}

// isStoredConfigError reports a stored entry or setting that does not
// load, as opposed to a database that cannot be read.
func isStoredConfigError(err error) bool {
	var ee *guard.EntryError
	var se *tools.SettingError
	return errors.As(err, &ee) || errors.As(err, &se)
}

// storedEntryError says how to get rid of an entry the store should never
// have held.
func storedEntryError(ee *guard.EntryError) error {
	return fmt.Errorf("the stored allowlist has a bad entry (%w); remove it with `console allow rm %s`", ee, ee.Input)
}
