package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

const allowUsage = "allow add ENTRY… [--note TEXT]\nallow rm ENTRY…\nallow list [--json]"

// allowSubcommands is every subcommand once, in the order help lists them.
var allowSubcommands = []func(context.Context, env, []string) error{allowAdd, allowRemove, allowList}

func runAllow(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		return usagef("name a subcommand: %s", oneLineUsage(allowUsage))
	}
	switch args[0] {
	case "-h", "--h", "-help", "--help", "help":
		return gatherHelp(ctx, e, allowSubcommands)
	case "add":
		return allowAdd(ctx, e, args[1:])
	case "rm", "remove":
		return allowRemove(ctx, e, args[1:])
	case "list", "ls":
		return allowList(ctx, e, args[1:])
	}
	return usagef("unknown subcommand %q: %s", args[0], oneLineUsage(allowUsage))
}

func allowAdd(ctx context.Context, e env, args []string) error {
	var db, note string
	fs := newFlags("allow add", &db)
	fs.StringVar(&note, "note", "", "why the entries are needed")
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
	store, err := openStore(db, mayCreate)
	if err != nil {
		return err
	}
	defer store.Close()
	rows, err := store.ListAllowlist(ctx)
	if err != nil {
		return err
	}
	existing, err := storedEntries(rows)
	if err != nil {
		return err
	}
	entries, errs := guard.ParseEntries(strings.Join(rest, "\n"), existing)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, ee := range errs {
			problem, fix := cliEntryProblem(ee, existing)
			msgs[i] = fmt.Sprintf("%q: %s; %s", ee.Input, problem, fix)
		}
		return usagef("nothing was added:\n  %s", strings.Join(msgs, "\n  "))
	}
	now, by := time.Now(), actor()
	add := make([]models.AllowlistEntry, len(entries))
	for i, en := range entries {
		add[i] = models.AllowlistEntry{Entry: en.String(), Note: note, AddedBy: by, CreatedAt: now}
	}
	if _, err := store.AddAllowlistEntries(ctx, models.AnyRevision, add); err != nil {
		return err
	}
	records := make([]models.Audit, len(entries))
	for i, en := range entries {
		records[i] = models.Audit{Actor: by, Action: "allowlist.add", Target: en.String(), After: en.String() + noteSuffix(note)}
	}
	if err := store.RecordAudit(ctx, records...); err != nil {
		return err
	}
	for _, en := range entries {
		fmt.Fprintf(e.stdout, "added %s\n", en)
	}
	fmt.Fprintln(e.stdout, badge(len(existing)+len(entries)))
	return nil
}

func allowRemove(ctx context.Context, e env, args []string) error {
	var db string
	fs := newFlags("allow rm", &db)
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("name at least one entry: console allow rm status.example.com")
	}
	names := make([]string, len(rest))
	for i, text := range rest {
		en, err := guard.ParseEntry(text)
		if err != nil {
			names[i] = text // remove it as written: a bad stored entry must be removable
			continue
		}
		names[i] = en.String()
	}
	store, err := openStore(db, mustExist)
	if err != nil {
		return err
	}
	defer store.Close()
	before, err := store.ListAllowlist(ctx)
	if err != nil {
		return err
	}
	if _, err := store.RemoveAllowlistEntries(ctx, models.AnyRevision, names); err != nil {
		var nf *models.NotFoundError
		if errors.As(err, &nf) {
			return usagef("nothing was removed: %s is not on the allowlist; see `console allow list` for the entries as stored", nf.Value)
		}
		return err
	}
	records := make([]models.Audit, len(names))
	for i, n := range names {
		records[i] = models.Audit{Actor: actor(), Action: "allowlist.remove", Target: n, Before: n}
	}
	if err := store.RecordAudit(ctx, records...); err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintf(e.stdout, "removed %s\n", n)
	}
	fmt.Fprintln(e.stdout, badge(len(before)-len(names)))
	return nil
}

type entryJSON struct {
	Entry   string    `json:"entry"`
	Note    string    `json:"note"`
	AddedBy string    `json:"added_by"`
	AddedAt time.Time `json:"added_at"`
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
	store, err := openStore(db, mustExist)
	if err != nil {
		return err
	}
	defer store.Close()
	rows, err := store.ListAllowlist(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]entryJSON, len(rows))
		for i, r := range rows {
			out[i] = entryJSON{r.Entry, r.Note, r.AddedBy, r.CreatedAt.UTC()}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintln(e.stdout, badge(len(rows)))
	if len(rows) == 0 {
		fmt.Fprintln(e.stdout, "Any public host on the allowed ports can be reached. Add an entry to allow only listed hosts.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTRY\tNOTE\tADDED BY\tADDED")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Entry, r.Note, r.AddedBy, r.CreatedAt.Local().Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

// cliEntryProblem words one bad entry for the command line. The guard's
// wording for a repeated entry speaks of the web form's lines ("remove
// this line"); here each entry is an argument. An entry that parses can
// only have been refused as a repeat, of a stored entry or of another
// argument.
func cliEntryProblem(ee *guard.EntryError, existing []guard.Entry) (problem, fix string) {
	en, err := guard.ParseEntry(ee.Input)
	switch {
	case err != nil:
		return ee.Problem, ee.Fix
	case slices.Contains(existing, en):
		return "the entry " + en.String() + " is already on the list", "leave it out; the host is allowed already (see `console allow list`)"
	default:
		return "the entry is given twice", "give each entry once"
	}
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return " (note: " + note + ")"
}

// badge is the card's badge: PUBLIC WEB for an empty list, N ALLOWED otherwise.
func badge(n int) string {
	if n == 0 {
		return "PUBLIC WEB"
	}
	return fmt.Sprintf("%d ALLOWED", n)
}

func storedEntries(rows []models.AllowlistEntry) ([]guard.Entry, error) {
	entries, err := guard.ParseStoredEntries(app.EntryTexts(rows))
	var ee *guard.EntryError
	if errors.As(err, &ee) {
		return nil, storedEntryError(ee)
	}
	return entries, err
}

// storedEntryError says how to get rid of an entry the store should never
// have held.
func storedEntryError(ee *guard.EntryError) error {
	return fmt.Errorf("the stored allowlist has a bad entry (%w); remove it with `console allow rm %s`", ee, ee.Input)
}
