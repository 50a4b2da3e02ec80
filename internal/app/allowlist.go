package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// MaxNoteRunes bounds an allowlist entry's note: it is shown in a table
// cell, not a document.
const MaxNoteRunes = 500

// AllowlistState is the allowlist as read at one moment.
type AllowlistState struct {
	// Version is read before the rows, so a change based on this state
	// can only ever conflict spuriously; it never hides a change its
	// author did not see.
	Version int64
	Rows    []models.AllowlistEntry
	Entries []guard.Entry // Rows, parsed, in the same order
}

// PublicWeb reports whether the default scope reaches the public web: no
// enforced entry of it narrows it (internal hosts and report-only
// entries do not).
func (st AllowlistState) PublicWeb() bool {
	for _, r := range st.Rows {
		if r.ScopeKey == "" && !r.Internal && !r.ReportOnly {
			return false
		}
	}
	return true
}

// Find returns the default scope's row whose entry is text, as stored or
// as someone might type it (upper case, a trailing dot).
func (st AllowlistState) Find(text string) (models.AllowlistEntry, guard.Entry, bool) {
	want := canonicalEntry(text)
	for i, r := range st.Rows {
		if (r.Entry == text || r.Entry == want) && r.ScopeKey == "" {
			return r, st.Entries[i], true
		}
	}
	return models.AllowlistEntry{}, guard.Entry{}, false
}

// canonicalEntry is text as the store keeps it, or text itself when it
// does not parse (a bad stored entry must still be removable as written).
func canonicalEntry(text string) string {
	if e, err := guard.ParseEntry(text); err == nil {
		return e.String()
	}
	return text
}

// Allowlist reads the allowlist and its version.
func (a *App) Allowlist(ctx context.Context) (AllowlistState, error) {
	var st AllowlistState
	var err error
	if st.Version, err = a.store.Version(ctx, models.SectionAllowlist); err != nil {
		return st, err
	}
	if st.Rows, err = a.store.ListAllowlist(ctx); err != nil {
		return st, err
	}
	// host2 before host10, on every surface that lists the entries.
	slices.SortStableFunc(st.Rows, func(x, y models.AllowlistEntry) int { return NaturalCompare(x.Entry, y.Entry) })
	// The store only ever receives entries the guard normalised, so a row
	// that does not parse is corruption, not a typo: say how to remove it.
	st.Entries, err = guard.ParseStoredEntries(EntryTexts(st.Rows))
	var ee *guard.EntryError
	if errors.As(err, &ee) {
		return st, storedEntryError(ee)
	}
	return st, err
}

// EntryTexts is the entries of rows as text, in order: what the guard's
// policy is built from.
func EntryTexts(rows []models.AllowlistEntry) []string {
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = r.Entry
	}
	return texts
}

// AddEntries asks for entries to be added to the allowlist, all or none.
type AddEntries struct {
	// Entries are the typed entries, one per element or per line.
	Entries []string
	Note    string
	Actor   string
	// Scope limits the entries to some agents and tools; the zero Scope
	// is the default scope (every agent, every tool).
	Scope guard.Scope
	// Internal adds internal hosts: literal entries that let the scope
	// reach them without narrowing it to listed hosts.
	Internal bool
	// ReportOnly adds the entries to be tried, not enforced: requests
	// they would refuse are allowed and kept as would-be refusals.
	ReportOnly bool
	// Version is the allowlist version the caller's form was built from,
	// or models.AnyRevision for a scripted change.
	Version int64
	// AlreadyListedIsOK makes the add idempotent (the command line): an
	// entry already on the list, or given twice, is reported in
	// AlreadyListed instead of refusing the whole add. A form flags both,
	// because its author can still correct what they typed.
	AlreadyListedIsOK bool
}

// EntriesAdded is what an add did.
type EntriesAdded struct {
	Added         []guard.Entry
	AlreadyListed []guard.Entry
	// LeftPublicWeb is set when the scope reached the public web before
	// and now reaches only listed hosts.
	LeftPublicWeb bool
	// Mode is the scope's mode before and after, for the words that say
	// a change switched it (ModeChange.Sentence).
	Mode ModeChange
	// Listed is how many entries the list holds now.
	Listed  int
	Version int64
}

// AddEntries validates the entries and the note against the list as it
// is, stores them with one audit record each in one transaction, and
// reloads the running guard. Errors: *ConflictError (the list changed
// since req.Version; nothing stored), *ValidationError (every bad line
// and the note, each with its fix), *NotReloadedError (stored, result
// valid, not yet enforced).
func (a *App) AddEntries(ctx context.Context, req AddEntries) (EntriesAdded, error) {
	st, err := a.Allowlist(ctx)
	if err != nil {
		return EntriesAdded{}, err
	}
	if req.Version != models.AnyRevision && req.Version != st.Version {
		return EntriesAdded{}, &ConflictError{Section: models.SectionAllowlist, Expected: req.Version, Current: st.Version}
	}
	req.Scope = req.Scope.Normalized()
	add, already, verr := CheckNewEntries(req, st.EntriesIn(req.Scope))
	if verr == nil {
		verr = a.checkRuleFlags(ctx, req, add)
	}
	if verr != nil {
		return EntriesAdded{}, verr
	}
	res := EntriesAdded{AlreadyListed: already, Listed: len(st.Rows), Version: st.Version}
	if len(add) == 0 {
		res.Mode = ModeChange{Scope: req.Scope, Was: st.ReachOf(req.Scope), Now: st.ReachOf(req.Scope)}
		return res, nil // all already listed: nothing to store, audit or reload
	}
	if len(st.Rows)+len(add) > models.MaxAllowlistEntries {
		return EntriesAdded{}, allowlistFull(&models.AllowlistFullError{Listed: len(st.Rows), Adding: len(add)})
	}
	note, now := strings.TrimSpace(req.Note), time.Now().UTC()
	rows := make([]models.AllowlistEntry, len(add))
	records := make([]models.Audit, len(add))
	for i, e := range add {
		rows[i] = models.AllowlistEntry{Entry: e.String(), ScopeKey: req.Scope.Key(), Agents: req.Scope.Agents, Tools: req.Scope.Tools,
			Internal: req.Internal, ReportOnly: req.ReportOnly, Note: note, AddedBy: req.Actor, CreatedAt: now}
		records[i] = models.Audit{Actor: req.Actor, Action: ActionAllowlistAdd, Target: e.String(), After: EntryWithNote(RowText(rows[i]), note)}
	}
	v, err := a.store.AddAllowlistEntries(ctx, req.Version, rows, records...)
	if err != nil {
		return EntriesAdded{}, a.allowlistRace(ctx, req.Version, err)
	}
	a.closeNeedsAccess(ctx, req.Actor, rows)
	after := st
	after.Rows = append(slices.Clone(st.Rows), rows...)
	res.Mode = ModeChange{Scope: req.Scope, Was: st.ReachOf(req.Scope), Now: after.ReachOf(req.Scope)}
	res.Added, res.LeftPublicWeb, res.Listed, res.Version = add, res.Mode.Was.PublicWeb && !res.Mode.Now.PublicWeb, len(st.Rows)+len(add), v
	return res, a.reloadAfter(ctx, "allowlist")
}

// checkRuleFlags checks what the scope and the flags allow: known agent
// and tool names, internal hosts that are literal, and no internal host
// run report-only (it only widens).
func (a *App) checkRuleFlags(ctx context.Context, req AddEntries, add []guard.Entry) *ValidationError {
	problems := a.checkScope(ctx, req.Scope)
	if req.Internal && req.ReportOnly {
		problems = append(problems, Problem{Field: "report_only", Problem: "an internal host only widens access, so it cannot run report-only",
			Fix: "add it enforced, or leave out --internal to try a narrowing entry report-only"})
	}
	for _, e := range add {
		if req.Internal && e.Wildcard() {
			problems = append(problems, Problem{Field: "entries", Input: e.String(), Problem: "an internal host must be one named host, not a wildcard",
				Fix: "list each internal host literally, e.g. " + strings.TrimPrefix(e.String(), "*.") + "; a wildcard never reaches private addresses"})
		}
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// allowlistRace words a store error for a change that raced another: an
// entry added or removed by someone else between our read and our write
// is a conflict like a stale version.
func (a *App) allowlistRace(ctx context.Context, expected int64, err error) error {
	var full *models.AllowlistFullError
	if errors.As(err, &full) { // another add filled the list meanwhile
		return allowlistFull(full)
	}
	if !errors.Is(err, models.ErrDuplicate) && !errors.Is(err, models.ErrNotFound) {
		return storeError(err)
	}
	current, verr := a.store.Version(ctx, models.SectionAllowlist)
	if verr != nil {
		return verr
	}
	return &ConflictError{Section: models.SectionAllowlist, Expected: expected, Current: current}
}

// CheckNewEntries parses the entries of req against the existing list and
// checks its note, without storing anything. It returns the entries to
// add and, for an idempotent add, those already listed. A form that must
// show the problems next to a conflict calls it on its own.
func CheckNewEntries(req AddEntries, existing []guard.Entry) (add, already []guard.Entry, verr *ValidationError) {
	var problems []Problem
	text := strings.Join(req.Entries, "\n")
	if req.AlreadyListedIsOK {
		text, already = dropListed(text, existing)
	}
	add, errs := guard.ParseEntries(text, existing)
	for _, e := range errs {
		problems = append(problems, Problem{Field: "entries", Line: e.Line, Input: e.Input, Problem: e.Problem, Fix: e.Fix})
	}
	if len(errs) == 0 && len(add) == 0 && len(already) == 0 {
		problems = append(problems, Problem{Field: "entries", Code: ProblemNoEntries,
			Problem: "no entry was given", Fix: "type at least one entry, one per line, e.g. status.example.com"})
	}
	if p, ok := checkNote(req.Note); !ok {
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		return nil, nil, &ValidationError{Problems: problems}
	}
	return add, already, nil
}

// dropListed blanks the lines of text whose entry is already listed or
// already given above, keeping line numbers, and returns those entries.
func dropListed(text string, existing []guard.Entry) (string, []guard.Entry) {
	have := make(map[guard.Entry]bool, len(existing))
	for _, e := range existing {
		have[e] = true
	}
	var already []guard.Entry
	seen := map[guard.Entry]bool{}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, line := range lines {
		e, err := guard.ParseEntry(strings.TrimSpace(line))
		if err != nil || strings.TrimSpace(line) == "" {
			continue
		}
		switch {
		case have[e]:
			if !seen[e] {
				already = append(already, e)
			}
			seen[e] = true
			lines[i] = ""
		case seen[e]:
			lines[i] = "" // given twice: added once
		}
		seen[e] = true
	}
	return strings.Join(lines, "\n"), already
}

// checkNote reports what is wrong with a note.
func checkNote(note string) (Problem, bool) {
	if n := utf8.RuneCountInString(strings.TrimSpace(note)); n > MaxNoteRunes {
		return Problem{Field: "note", Problem: fmt.Sprintf("the note is %d characters long", n),
			Fix: fmt.Sprintf("keep it under %d, e.g. a ticket number and a few words", MaxNoteRunes)}, false
	}
	if strings.IndexFunc(note, unicode.IsControl) >= 0 {
		return Problem{Field: "note", Problem: "the note contains a line break or control character", Fix: "write it on one line"}, false
	}
	return Problem{}, true
}

// EntryWithNote is an entry as the audit trail shows it.
func EntryWithNote(entry, note string) string {
	if note == "" {
		return entry
	}
	return entry + " (note: " + note + ")"
}

// RemoveEntries asks for entries to be removed from the allowlist, all or
// none.
type RemoveEntries struct {
	// Entries as stored or as typed (upper case, a trailing dot).
	Entries []string
	Actor   string
	Version int64 // as for AddEntries
	// Scope is the scope the entries are in; zero: the default scope.
	Scope guard.Scope
}

// EntriesRemoved is what a remove did.
type EntriesRemoved struct {
	Removed []models.AllowlistEntry
	// PublicWeb is set when the scope is now on PUBLIC WEB, where its
	// agents reach any public host.
	PublicWeb bool
	// Mode is the scope's mode before and after.
	Mode    ModeChange
	Listed  int // entries left
	Version int64
}

// RemoveEntries removes the named entries with one audit record each in
// one transaction, and reloads the running guard. Errors:
// *ConflictError, *NotFoundError (naming the entry; nothing removed),
// *NotReloadedError (removed, result valid).
func (a *App) RemoveEntries(ctx context.Context, req RemoveEntries) (EntriesRemoved, error) {
	if len(req.Entries) == 0 {
		return EntriesRemoved{}, &ValidationError{Problems: []Problem{{Field: "entries", Code: ProblemNoEntries,
			Problem: "no entry was named", Fix: "name the entry to remove, e.g. status.example.com"}}}
	}
	st, err := a.Allowlist(ctx)
	var ee *guard.EntryError
	switch {
	case errors.As(err, &ee):
		// A bad stored entry must stay removable: that is the fix its
		// error names. Rows are found by their text alone.
		st.Entries = make([]guard.Entry, len(st.Rows))
	case err != nil:
		return EntriesRemoved{}, err
	}
	if req.Version != models.AnyRevision && req.Version != st.Version {
		return EntriesRemoved{}, &ConflictError{Section: models.SectionAllowlist, Expected: req.Version, Current: st.Version}
	}
	var rows []models.AllowlistEntry
	seen := map[string]bool{}
	req.Scope = req.Scope.Normalized()
	for _, text := range req.Entries {
		row, ok := st.FindIn(strings.TrimSpace(text), req.Scope)
		if !ok {
			return EntriesRemoved{}, &NotFoundError{Kind: "allowlist entry", Name: strings.TrimSpace(text)}
		}
		if !seen[row.Entry] {
			seen[row.Entry] = true
			rows = append(rows, row)
		}
	}
	records := make([]models.Audit, len(rows))
	for i, r := range rows {
		records[i] = models.Audit{Actor: req.Actor, Action: ActionAllowlistRemove, Target: r.Entry, Before: EntryWithNote(RowText(r), r.Note)}
	}
	v, err := a.store.RemoveAllowlistRows(ctx, req.Version, rows, records...)
	if err != nil {
		return EntriesRemoved{}, a.allowlistRace(ctx, req.Version, err)
	}
	left := len(st.Rows) - len(rows)
	after := st
	after.Rows = slices.DeleteFunc(slices.Clone(st.Rows), func(r models.AllowlistEntry) bool { return seen[r.Entry] && r.ScopeKey == req.Scope.Key() })
	res := EntriesRemoved{Removed: rows, Listed: left, Version: v, Mode: ModeChange{Scope: req.Scope, Was: st.ReachOf(req.Scope), Now: after.ReachOf(req.Scope)}}
	res.PublicWeb = res.Mode.Now.PublicWeb
	return res, a.reloadAfter(ctx, "allowlist")
}

// allowlistFull words the cap as a problem with the entries, so a form
// shows it above them with the input kept, and the command line prints it.
func allowlistFull(e *models.AllowlistFullError) *ValidationError {
	return &ValidationError{Problems: []Problem{{Field: "entries", Code: ProblemAllowlistFull, Problem: e.Problem(), Fix: e.Fix()}}}
}
