package app

import (
	"context"
	"strings"

	"github.com/outboundhq/outbound/models"
)

// SetEntryNote asks for the note of one allowlist entry to be replaced
// (an empty note removes it).
type SetEntryNote struct {
	// Entry as stored or as typed (upper case, a trailing dot).
	Entry   string
	Note    string
	Actor   string
	Version int64 // as for AddEntries
}

// SetEntryNote checks the note, stores it with one audit record (before
// and after, as EntryWithNote words them) and returns the new version.
// A note is not policy, so the guard is not reloaded. Errors:
// *ValidationError (the note), *ConflictError, *NotFoundError.
func (a *App) SetEntryNote(ctx context.Context, req SetEntryNote) (int64, error) {
	note := strings.TrimSpace(req.Note)
	if p, ok := checkNote(req.Note); !ok {
		return 0, &ValidationError{Problems: []Problem{p}}
	}
	st, err := a.Allowlist(ctx)
	if err != nil {
		return 0, err
	}
	if req.Version != models.AnyRevision && req.Version != st.Version {
		return 0, &ConflictError{Section: models.SectionAllowlist, Expected: req.Version, Current: st.Version}
	}
	row, _, ok := st.Find(strings.TrimSpace(req.Entry))
	if !ok {
		return 0, &NotFoundError{Kind: "allowlist entry", Name: strings.TrimSpace(req.Entry)}
	}
	if row.Note == note {
		return st.Version, nil // nothing changed: no write, no audit record
	}
	rec := models.Audit{Actor: req.Actor, Action: ActionAllowlistNote, Target: row.Entry,
		Before: EntryWithNote(row.Entry, row.Note), After: EntryWithNote(row.Entry, note)}
	v, err := a.store.SetAllowlistNote(ctx, req.Version, row, note, rec)
	if err != nil {
		return 0, a.allowlistRace(ctx, req.Version, err)
	}
	return v, nil
}
