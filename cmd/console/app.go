package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/user"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// app wires the store to the guard: the store's allowlist and settings
// become the guard's policy, the guard's refusals go to the store's
// batched writer, and a change made by any process on the same database
// reaches this one through the revision number.
type app struct {
	store    *models.Store
	guard    *guard.Guard
	refusals *models.RefusalWriter
	log      *slog.Logger
	// secrets seals integration header secrets; integrations runs them.
	secrets      *tools.SecretBox
	integrations *tools.Integrations

	settings atomic.Pointer[tools.Settings]
	revision atomic.Int64
	reloadMu sync.Mutex
}

type appOptions struct {
	resolver guard.Resolver
	observer guard.Observer
	log      *slog.Logger
	// readOnly is for commands that only decide or fetch (check, fetch):
	// the database must already exist, and the integrations are not
	// loaded, so their secret key file is neither needed nor created.
	readOnly bool
}

func openApp(ctx context.Context, dbPath string, opts appOptions) (*app, error) {
	mode := mayCreate
	if opts.readOnly {
		mode = mustExist
	}
	store, err := openStore(dbPath, mode)
	if err != nil {
		return nil, err
	}
	a := &app{store: store, log: opts.log}
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	a.refusals = models.NewRefusalWriter(store, models.RefusalWriterOptions{})
	a.guard = guard.New(guard.Options{Resolver: opts.resolver, Observer: decisionLog{log: a.log, next: opts.observer}, Reporter: guard.ReporterFunc(a.report)})
	if !opts.readOnly {
		if a.secrets, err = openSecretBox(dbPath, os.Getenv); err != nil {
			a.Close()
			return nil, err
		}
		a.integrations = tools.NewIntegrations(a.guard, a.Settings)
	}
	if err := a.reload(ctx); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// reload reads the allowlist and settings and swaps in a new policy. It
// builds everything off the live path first; on any failure the running
// policy stays as it was. Reloads run one at a time: the revision watch
// and a console save can both ask for one, and two interleaved reloads
// could otherwise store the older configuration last. The revision is
// read before the configuration, so a change landing in between is seen
// as a newer revision by the next poll and loaded again.
func (a *app) reload(ctx context.Context) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	rev, err := a.store.Revision(ctx)
	if err != nil {
		return err
	}
	p, s, err := loadPolicy(ctx, a.store)
	if err != nil {
		return err
	}
	a.guard.SetPolicy(p)
	a.settings.Store(&s)
	a.revision.Store(rev)
	if a.integrations == nil {
		return nil // a read-only app runs no integration
	}
	return a.loadIntegrations(ctx)
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
	p, s, err := tools.BuildPolicy(entryTexts(rows), values)
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

func entryTexts(rows []models.AllowlistEntry) []string {
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = r.Entry
	}
	return texts
}

// watch reloads whenever another process changes the configuration. It
// returns when ctx ends.
func (a *app) watch(ctx context.Context) {
	err := a.store.Watch(ctx, 250*time.Millisecond, func(rev int64) {
		if rev == a.revision.Load() {
			return
		}
		if err := a.reload(ctx); err != nil {
			a.log.Error("reload failed; the previous policy stays in force", "revision", rev, "err", err)
			return
		}
		a.log.Info("policy reloaded", "revision", rev)
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		a.log.Error("configuration watch stopped", "err", err)
	}
}

// Settings returns the settings in force.
func (a *app) Settings() tools.Settings { return *a.settings.Load() }

// report turns a guard event into a refusal log row. The writer queues it
// and never blocks the decision.
func (a *app) report(e guard.Event) {
	r := e.Refusal
	a.refusals.Write(models.Refusal{
		Time: e.Time, Tool: e.Caller.Tool, URL: r.URL, Host: r.Host, Port: int(e.Port),
		Addresses: joinAddrs(r.Addresses), Code: string(r.Code), Reason: string(r.Reason),
		Message: r.Message, Fix: r.Fix, Entry: r.Entry,
		Agent: e.Caller.Agent, Thread: e.Caller.Thread, Trigger: e.Caller.Trigger,
		Redirects: strings.Join(e.Redirects, "\n"),
	})
	a.log.Info("refused", "tool", e.Caller.Tool, "agent", e.Caller.Agent, "thread", e.Caller.Thread,
		"url", r.URL, "host", r.Host, "code", r.Code, "reason", r.Reason, "addresses", joinAddrs(r.Addresses))
}

// decisionLog writes one structured record per allowed decision and passes
// every observation on (to the metrics). Refusals get their record from
// report, with the refusal's details, so each decision has exactly one.
type decisionLog struct {
	log  *slog.Logger
	next guard.Observer
}

func (l decisionLog) Observe(o guard.Observation) {
	if o.Allowed && l.log.Enabled(context.Background(), slog.LevelInfo) {
		// Typed attributes: this runs once per proxied request.
		l.log.LogAttrs(context.Background(), slog.LevelInfo, "allowed",
			slog.String("tool", o.Caller.Tool), slog.String("agent", o.Caller.Agent), slog.String("thread", o.Caller.Thread),
			slog.String("url", o.URL), slog.String("host", o.Host), slog.Int64("ms", o.Elapsed.Milliseconds()))
	}
	if l.next != nil {
		l.next.Observe(o)
	}
}

func joinAddrs(addrs []netip.Addr) string {
	parts := make([]string, len(addrs))
	for i, a := range addrs {
		parts[i] = a.String()
	}
	return strings.Join(parts, ",")
}

// Close flushes queued refusals and closes the store.
func (a *app) Close() error {
	a.guard.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(a.refusals.Close(ctx), a.store.Close())
}

// actor names who made a change from the command line, for the entry's
// "added by" and the audit trail.
func actor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}
