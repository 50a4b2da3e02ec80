package web

// Adding and removing allowlist entries. Both are all-or-nothing, both are
// checked against the revision the admin's page showed (a stale page gets
// 409 and keeps what was typed), and both reload the running guard before
// answering, so the next decision already enforces the change.

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// maxNoteRunes bounds a note: it is shown in a table cell, not a document.
const maxNoteRunes = 500

func (s *Server) addAllowlist(c echo.Context) error {
	ctx := c.Request().Context()
	formRev, err := formRevision(c)
	if err != nil {
		return err
	}
	form := &views.AllowForm{Revision: formRev, Entries: c.FormValue("entries"), Note: c.FormValue("note")}
	st, err := s.loadAllowlist(ctx)
	if err != nil {
		return err
	}
	entries := checkAddForm(form, st.entries)
	if formRev != st.revision {
		return s.addConflict(c, st, form)
	}
	if form.Error != "" || form.NoteError != "" || len(form.Errors) > 0 {
		return s.renderAddForm(c, http.StatusUnprocessableEntity, st, form, "")
	}

	u, now, note := userOf(c), s.d.Now().UTC(), strings.TrimSpace(form.Note)
	rows := make([]models.AllowlistEntry, len(entries))
	records := make([]models.Audit, len(entries))
	for i, e := range entries {
		rows[i] = models.AllowlistEntry{Entry: e.String(), Note: note, AddedBy: u.Name, CreatedAt: now}
		records[i] = models.Audit{Actor: u.Name, Action: "allowlist.add", Target: e.String(), After: entryWithNote(e.String(), note)}
	}
	if _, err := s.d.Store.AddAllowlistEntries(ctx, formRev, rows); err != nil {
		// Someone saved between our read and our write: the same answer
		// as a stale page, against the list as it is now.
		if errors.Is(err, models.ErrConflict) || errors.Is(err, models.ErrDuplicate) {
			if st, err = s.loadAllowlist(ctx); err != nil {
				return err
			}
			checkAddForm(form, st.entries)
			return s.addConflict(c, st, form)
		}
		return err
	}
	s.audit(c, records...)
	msg := addedMessage(entries)
	if len(st.rows) == 0 {
		msg += " The console is no longer on PUBLIC WEB: agents reach only the listed hosts."
	}
	return s.reloadAndReturn(c, msg)
}

// checkAddForm parses the typed entries against the current list and sets
// the form's errors. It returns the entries when every line is valid.
func checkAddForm(f *views.AllowForm, existing []guard.Entry) []guard.Entry {
	f.Errors, f.Error, f.NoteError = nil, "", checkNote(f.Note)
	entries, errs := guard.ParseEntries(f.Entries, existing)
	for _, e := range errs {
		f.Errors = append(f.Errors, views.EntryProblem{Line: e.Line, Input: e.Input, Problem: e.Problem, Fix: e.Fix})
	}
	if len(errs) == 0 && len(entries) == 0 {
		f.Error = "Type at least one entry, one per line, e.g. status.example.com."
	}
	return entries
}

// checkNote returns what is wrong with a note, or "".
func checkNote(note string) string {
	if n := utf8.RuneCountInString(strings.TrimSpace(note)); n > maxNoteRunes {
		return fmt.Sprintf("The note is %d characters long; keep it under %d, e.g. a ticket number and a few words.", n, maxNoteRunes)
	}
	if strings.IndexFunc(note, unicode.IsControl) >= 0 {
		return "The note contains a line break or control character; write it on one line."
	}
	return ""
}

// addConflict answers a save from a stale page: nothing is saved, the
// admin's input stays as typed, and the form now carries the current
// revision, because the page they get back shows the current list.
func (s *Server) addConflict(c echo.Context, st allowlistState, f *views.AllowForm) error {
	notice := fmt.Sprintf("The allowlist changed while you were editing, in another tab or by another admin (your page showed version %d; it is now at version %d). Nothing was saved. The list below is current: check your entries against it, then press Add entries again.",
		f.Revision, st.revision)
	f.Revision = st.revision
	return s.renderAddForm(c, http.StatusConflict, st, f, notice)
}

func (s *Server) renderAddForm(c echo.Context, status int, st allowlistState, f *views.AllowForm, notice string) error {
	p, err := s.egressPage(c, st)
	if err != nil {
		return err
	}
	p.Form, p.Notice = f, notice
	return s.renderEgress(c, status, p)
}

func entryWithNote(entry, note string) string {
	if note == "" {
		return entry
	}
	return entry + " (note: " + note + ")"
}

// addedMessage is the flash after an add: how many, and which.
func addedMessage(entries []guard.Entry) string {
	const shown = 5
	names := make([]string, 0, shown)
	for i, e := range entries {
		if i == shown {
			break
		}
		names = append(names, e.String())
	}
	list := strings.Join(names, ", ")
	if more := len(entries) - shown; more > 0 {
		list += " and " + strconv.Itoa(more) + " more"
	}
	noun := "entries"
	if len(entries) == 1 {
		noun = "entry"
	}
	return fmt.Sprintf("Added %d %s: %s. Agents can reach %s now.", len(entries), noun, list, pronoun(len(entries)))
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func (s *Server) removeAllowlist(c echo.Context) error {
	ctx := c.Request().Context()
	formRev, err := formRevision(c)
	if err != nil {
		return err
	}
	text := strings.TrimSpace(c.FormValue("entry"))
	st, err := s.loadAllowlist(ctx)
	if err != nil {
		return err
	}
	if formRev != st.revision {
		return s.removeRefused(c, st, http.StatusConflict, fmt.Sprintf(
			"The allowlist changed after your page was loaded, in another tab or by another admin (your page showed version %d; it is now at version %d). Nothing was removed. The list below is current: remove %s again if you still want to.",
			formRev, st.revision, text))
	}
	row, entry, ok := st.find(text)
	if !ok {
		return s.removeRefused(c, st, http.StatusNotFound, fmt.Sprintf("%q is not on the allowlist, so nothing was removed. The list below is current.", text))
	}
	ports := openPorts(st.settings)
	if c.FormValue("confirmed") != "yes" {
		confirm := views.RemoveConfirm{
			Entry: row.Entry, Consequence: removeConsequence(entry, ports, len(st.rows)), Last: len(st.rows) == 1,
			Note: row.Note, AddedBy: row.AddedBy, AddedAt: row.CreatedAt, Revision: st.revision,
		}
		return render(c, http.StatusOK, views.ConfirmRemove(s.shell(c, "Remove "+row.Entry, "integrations"), confirm))
	}
	if _, err := s.d.Store.RemoveAllowlistEntries(ctx, formRev, []string{row.Entry}); err != nil {
		if errors.Is(err, models.ErrConflict) || errors.Is(err, models.ErrNotFound) {
			if st, err = s.loadAllowlist(ctx); err != nil {
				return err
			}
			return s.removeRefused(c, st, http.StatusConflict, fmt.Sprintf(
				"The allowlist changed at the same moment, in another tab or by another admin. Nothing was removed. The list below is current: remove %s again if you still want to.", row.Entry))
		}
		return err
	}
	u := userOf(c)
	s.audit(c, models.Audit{Actor: u.Name, Action: "allowlist.remove", Target: row.Entry, Before: entryWithNote(row.Entry, row.Note)})
	msg := removedMessage(entry, ports, len(st.rows))
	return s.reloadAndReturn(c, msg)
}

func (s *Server) removeRefused(c echo.Context, st allowlistState, status int, notice string) error {
	p, err := s.egressPage(c, st)
	if err != nil {
		return err
	}
	p.Notice = notice
	return s.renderEgress(c, status, p)
}

// reloadAndReturn makes the running guard enforce a saved change now, then
// finishes the POST. The change is saved either way; if the reload fails,
// the admin is told so, because the Test a URL box would otherwise show a
// decision that is not the one in force.
func (s *Server) reloadAndReturn(c echo.Context, okMessage string) error {
	if s.d.Reload != nil {
		if err := s.d.Reload(c.Request().Context()); err != nil {
			s.d.Log.Error("allowlist saved but the guard did not reload", "err", err)
			s.flash(c, "error", okMessage+" But the running guard did not reload it (the cause is in the server log); it picks the change up at its next check of the database, or restart the console.")
			return redirect(c, "/integrations")
		}
	}
	s.flash(c, "ok", okMessage)
	return redirect(c, "/integrations")
}
