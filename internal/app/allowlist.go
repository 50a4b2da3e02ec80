package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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

// PublicWeb reports whether the list is empty: any public host on the
// allowed ports is reachable.
func (st AllowlistState) PublicWeb() bool { return len(st.Rows) == 0 }

// Find returns the row whose entry is text, as stored or as someone might
// type it (upper case, a trailing dot).
func (st AllowlistState) Find(text string) (models.AllowlistEntry, guard.Entry, bool) {
	want := canonicalEntry(text)
	for i, r := range st.Rows {
		if r.Entry == text || r.Entry == want {
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
	// LeftPublicWeb is set when the list was empty before: the console
	// went from PUBLIC WEB to allowing only listed hosts.
	LeftPublicWeb bool
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
	add, already, verr := CheckNewEntries(req, st.Entries)
	if verr != nil {
		return EntriesAdded{}, verr
	}
	res := EntriesAdded{AlreadyListed: already, Listed: len(st.Rows), Version: st.Version}
	if len(add) == 0 {
		return res, nil // all already listed: nothing to store, audit or reload
	}
	if len(st.Rows)+len(add) > models.MaxAllowlistEntries {
		return EntriesAdded{}, allowlistFull(&models.AllowlistFullError{Listed: len(st.Rows), Adding: len(add)})
	}
	note, now := strings.TrimSpace(req.Note), time.Now().UTC()
	rows := make([]models.AllowlistEntry, len(add))
	records := make([]models.Audit, len(add))
	for i, e := range add {
		rows[i] = models.AllowlistEntry{Entry: e.String(), Note: note, AddedBy: req.Actor, CreatedAt: now}
		records[i] = models.Audit{Actor: req.Actor, Action: ActionAllowlistAdd, Target: e.String(), After: EntryWithNote(e.String(), note)}
	}
	v, err := a.store.AddAllowlistEntries(ctx, req.Version, rows, records...)
	if err != nil {
		return EntriesAdded{}, a.allowlistRace(ctx, req.Version, err)
	}
	res.Added, res.LeftPublicWeb, res.Listed, res.Version = add, len(st.Rows) == 0, len(st.Rows)+len(add), v
	return res, a.reloadAfter(ctx, "allowlist")
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
}

// EntriesRemoved is what a remove did.
type EntriesRemoved struct {
	Removed []models.AllowlistEntry
	// PublicWeb is set when the list is now empty: the console is back
	// on PUBLIC WEB, where agents reach any public host.
	PublicWeb bool
	Listed    int // entries left
	Version   int64
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
	for _, text := range req.Entries {
		row, _, ok := st.Find(strings.TrimSpace(text))
		if !ok {
			return EntriesRemoved{}, &NotFoundError{Kind: "allowlist entry", Name: strings.TrimSpace(text)}
		}
		if !seen[row.Entry] {
			seen[row.Entry] = true
			rows = append(rows, row)
		}
	}
	names := make([]string, len(rows))
	records := make([]models.Audit, len(rows))
	for i, r := range rows {
		names[i] = r.Entry
		records[i] = models.Audit{Actor: req.Actor, Action: ActionAllowlistRemove, Target: r.Entry, Before: EntryWithNote(r.Entry, r.Note)}
	}
	v, err := a.store.RemoveAllowlistEntries(ctx, req.Version, names, records...)
	if err != nil {
		return EntriesRemoved{}, a.allowlistRace(ctx, req.Version, err)
	}
	left := len(st.Rows) - len(rows)
	res := EntriesRemoved{Removed: rows, PublicWeb: left == 0, Listed: left, Version: v}
	return res, a.reloadAfter(ctx, "allowlist")
}

// Badge is the allowlist's mode as the console's card and the CLI show it:
// "PUBLIC WEB" for an empty list (any public host), "N ALLOWED" otherwise
// (only the listed hosts).
func Badge(entries int) string {
	if entries == 0 {
		return "PUBLIC WEB"
	}
	return strconv.Itoa(entries) + " ALLOWED"
}

// allowlistFull words the cap as a problem with the entries, so a form
// shows it above them with the input kept, and the command line prints it.
func allowlistFull(e *models.AllowlistFullError) *ValidationError {
	return &ValidationError{Problems: []Problem{{Field: "entries", Code: ProblemAllowlistFull, Problem: e.Problem(), Fix: e.Fix()}}}
}
