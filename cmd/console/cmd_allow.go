package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

const allowUsage = "allow add ENTRY… [--note TEXT] [--agent NAME]… [--tool TOOL]… [--internal] [--report-only]\nallow rm ENTRY… [--agent NAME]… [--tool TOOL]…\nallow enforce ENTRY… [--agent NAME]… [--tool TOOL]…\nallow list [--json]"

func runAllow(ctx context.Context, e env, args []string) error {
	return dispatch(ctx, e, args, allowUsage, []subcommand{
		{[]string{"add"}, allowAdd},
		{[]string{"rm", "remove"}, allowRemove},
		{[]string{"list", "ls"}, allowList},
		{[]string{"enforce"}, allowEnforce},
	})
}

func allowAdd(ctx context.Context, e env, args []string) error {
	var db, note string
	var internal, reportOnly bool
	fs := newFlags("allow add", &db)
	fs.StringVar(&note, "note", "", "why the entries are needed")
	scope := scopeFlags(fs)
	fs.BoolVar(&internal, "internal", false, "add internal hosts: the scope reaches them without being narrowed to listed hosts")
	fs.BoolVar(&reportOnly, "report-only", false, "try the entries first: what they would refuse is allowed and logged as would_refuse")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("name at least one entry: console allow add status.example.com [--note TEXT]")
	}
	for i, text := range rest {
		if strings.TrimSpace(text) == "" {
			return usagef("argument %d is empty; nothing was added: give each entry as text, e.g. status.example.com", i+1)
		}
	}
	a, err := openForChange(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	// Idempotent: a script that runs `allow add` twice must not fail the
	// second time, so an entry already listed is reported, not refused.
	res, err := a.AddEntries(ctx, app.AddEntries{Entries: rest, Note: note, Actor: actor(), Version: models.AnyRevision, AlreadyListedIsOK: true,
		Scope: *scope, Internal: internal, ReportOnly: reportOnly})
	var invalid *app.ValidationError
	if errors.As(err, &invalid) {
		return usagef("nothing was added:\n  %s", strings.Join(problemLines(invalid), "\n  "))
	}
	if err != nil && !isNotReloaded(err) {
		return err
	}
	for _, en := range res.Added {
		fmt.Fprintf(e.stdout, "added %s\n", en)
	}
	for _, en := range res.AlreadyListed {
		fmt.Fprintf(e.stdout, "%s is already listed; nothing to add\n", en)
	}
	fmt.Fprintln(e.stdout, modeLine(res.Mode))
	printModeChange(e.stdout, res.Mode)
	return notReloadedWarning(e, err)
}

// problemLines words each problem for the command line: the argument,
// what is wrong with it, and the fix.
func problemLines(invalid *app.ValidationError) []string {
	msgs := make([]string, len(invalid.Problems))
	for i, p := range invalid.Problems {
		switch {
		case p.Field == "note":
			msgs[i] = fmt.Sprintf("--note: %s; %s", p.Problem, p.Fix)
		case p.Field == "agents" || p.Field == "tools":
			msgs[i] = fmt.Sprintf("--%s %q: %s; %s", strings.TrimSuffix(p.Field, "s"), p.Input, p.Problem, p.Fix)
		case p.Field == "report_only":
			msgs[i] = fmt.Sprintf("--internal with --report-only: %s; %s", p.Problem, p.Fix)
		case p.Input != "":
			msgs[i] = fmt.Sprintf("%q: %s; %s", p.Input, p.Problem, p.Fix)
		default:
			msgs[i] = fmt.Sprintf("%s; %s", p.Problem, p.Fix)
		}
	}
	return msgs
}

func allowRemove(ctx context.Context, e env, args []string) error {
	var db string
	fs := newFlags("allow rm", &db)
	scope := scopeFlags(fs)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("name at least one entry: console allow rm status.example.com")
	}
	a, err := openForChange(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.RemoveEntries(ctx, app.RemoveEntries{Entries: rest, Actor: actor(), Version: models.AnyRevision, Scope: *scope})
	var nf *app.NotFoundError
	if errors.As(err, &nf) {
		return usagef("nothing was removed: %s is not on the allowlist in scope %s; see `console allow list` for the entries and their scopes, and pass the same --agent and --tool", nf.Name, scopeText(scope.Normalized()))
	}
	if err != nil && !isNotReloaded(err) {
		return err
	}
	for _, r := range res.Removed {
		fmt.Fprintf(e.stdout, "removed %s\n", r.Entry)
	}
	fmt.Fprintln(e.stdout, modeLine(res.Mode))
	printModeChange(e.stdout, res.Mode)
	return notReloadedWarning(e, err)
}

type entryJSON struct {
	Entry      string    `json:"entry"`
	Agents     []string  `json:"agents"`
	Tools      []string  `json:"tools"`
	Internal   bool      `json:"internal"`
	ReportOnly bool      `json:"report_only"`
	Note       string    `json:"note"`
	AddedBy    string    `json:"added_by"`
	AddedAt    time.Time `json:"added_at"`
}

func allowList(ctx context.Context, e env, args []string) error {
	var db string
	var asJSON bool
	fs := newFlags("allow list", &db)
	fs.BoolVar(&asJSON, "json", false, "print the entries as JSON")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usagef("allow list takes no arguments")
	}
	a, err := openToRead(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	st, err := a.Allowlist(ctx)
	var ee *guard.EntryError
	if err != nil && !errors.As(err, &ee) {
		return err // a bad stored entry is listed, so it can be seen and removed
	}
	rows := st.Rows
	if asJSON {
		out := make([]entryJSON, len(rows))
		for i, r := range rows {
			sc := app.ScopeOf(r)
			out[i] = entryJSON{Entry: r.Entry, Agents: nonNil(sc.Agents), Tools: nonNil(sc.Tools), Internal: r.Internal, ReportOnly: r.ReportOnly,
				Note: r.Note, AddedBy: r.AddedBy, AddedAt: r.CreatedAt.UTC()}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintln(e.stdout, app.BadgeOf(st.ReachOf(guard.Scope{})))
	if len(rows) == 0 {
		fmt.Fprintln(e.stdout, "Any public host on the allowed ports can be reached. Add an entry to allow only listed hosts, or --internal to let agents reach one internal host as well.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTRY\tSCOPE\tKIND\tNOTE\tADDED BY\tADDED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Entry, scopeText(app.ScopeOf(r)), rowKind(r), r.Note, r.AddedBy, r.CreatedAt.Local().Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

// rowKind says how an entry applies: listed (narrows its scope),
// internal, and report-only.
func rowKind(r models.AllowlistEntry) string {
	return ruleKind(guard.Rule{Internal: r.Internal, ReportOnly: r.ReportOnly})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// modeLine is the changed scope's badge, naming the scope when narrowed.
func modeLine(m app.ModeChange) string {
	if m.Scope.IsZero() {
		return app.BadgeOf(m.Now)
	}
	return app.BadgeOf(m.Now) + " for " + m.Scope.String()
}

func allowEnforce(ctx context.Context, e env, args []string) error {
	var db string
	fs := newFlags("allow enforce", &db)
	scope := scopeFlags(fs)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("name at least one report-only entry: console allow enforce status.example.com [--agent NAME] [--tool TOOL]")
	}
	a, err := openForChange(ctx, db)
	if err != nil {
		return err
	}
	defer a.Close()
	st, err := a.Allowlist(ctx)
	if err != nil {
		return err
	}
	var ids []int64
	for _, text := range rest {
		r, ok := st.FindIn(strings.TrimSpace(text), *scope)
		if !ok || !r.ReportOnly {
			return usagef("nothing was enforced: %s is not a report-only entry in scope %s; see `console allow list`", text, scopeText(scope.Normalized()))
		}
		ids = append(ids, r.ID)
	}
	res, err := a.EnforceEntries(ctx, app.EnforceEntries{IDs: ids, Actor: actor(), Version: st.Version})
	if err != nil && !isNotReloaded(err) {
		return err
	}
	for _, r := range res.Enforced {
		fmt.Fprintf(e.stdout, "enforced %s\n", r.Entry)
	}
	for _, m := range res.Modes {
		fmt.Fprintln(e.stdout, modeLine(m))
		printModeChange(e.stdout, m)
	}
	return notReloadedWarning(e, err)
}

// openForChange opens the app for a command that changes the allowlist
// or the settings. It opens even over a stored entry or setting that does
// not load, since the change may be its fix. The database must exist (a
// typo would otherwise save the change in a stray new file), and it is
// opened without the integrations, which the change does not touch, so
// that it neither needs nor creates their secret key file.
func openForChange(ctx context.Context, db string) (*app.App, error) {
	return openApp(ctx, db, app.Options{ReadOnly: true, Repair: true, Log: quietLog()})
}

// openToRead opens the app for a command that only reads the
// configuration (a list, a show): the database must exist, no secret is
// opened, and a stored entry or setting that does not load is still
// shown, so that it can be seen and fixed.
func openToRead(ctx context.Context, db string) (*app.App, error) {
	return openApp(ctx, db, app.Options{ReadOnly: true, Repair: true, Log: quietLog()})
}

// quietLog drops the app's own log lines: a command reports what happened
// on stdout and stderr in its own words.
func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func isNotReloaded(err error) bool {
	var nr *app.NotReloadedError
	return errors.As(err, &nr)
}

// notReloadedWarning tells the user that a saved change does not load
// yet: the configuration still holds a bad entry or setting, which the
// running console keeps refusing until it is fixed. The command still
// succeeds, since the change itself is saved.
func notReloadedWarning(e env, err error) error {
	var nr *app.NotReloadedError
	if errors.As(err, &nr) {
		fmt.Fprintf(e.stderr, "warning: saved, but the configuration does not load yet: %s\n", cliText(nr.Err.Error()))
	}
	return nil
}
