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

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

func (s *Server) addAllowlist(c echo.Context) error {
	ctx := c.Request().Context()
	formRev, err := formRevision(c)
	if err != nil {
		return err
	}
	form := &views.AllowForm{Revision: formRev, Entries: c.FormValue("entries"), Note: c.FormValue("note"),
		Agents: c.FormValue("agents"), Tools: c.FormValue("tools"), Internal: c.FormValue("internal") == "yes", ReportOnly: c.FormValue("report_only") == "yes"}
	res, err := s.d.Config.AddEntries(ctx, app.AddEntries{Entries: []string{form.Entries}, Note: form.Note, Actor: userOf(c).Name, Version: formRev,
		Scope: scopeFromForm(form.Agents, form.Tools), Internal: form.Internal, ReportOnly: form.ReportOnly})
	var conflict *app.ConflictError
	var invalid *app.ValidationError
	var notReloaded *app.NotReloadedError
	switch {
	case errors.As(err, &conflict):
		// A stale page, or someone saved between our read and our write:
		// the same answer, against the list as it is now, with what was
		// typed checked against it.
		st, err := s.loadAllowlist(ctx)
		if err != nil {
			return err
		}
		checkAddForm(form, st)
		return s.addConflict(c, st, form)
	case errors.As(err, &invalid):
		st, err := s.loadAllowlist(ctx)
		if err != nil {
			return err
		}
		showEntryProblems(form, invalid)
		return s.renderAddForm(c, http.StatusUnprocessableEntity, st, form, "")
	case err != nil && !errors.As(err, &notReloaded):
		return err
	}
	msg := addedMessage(res.Added)
	switch {
	case res.LeftPublicWeb && res.Mode.Scope.IsZero():
		msg += " The console is no longer on PUBLIC WEB: agents reach only the listed hosts."
	case res.Mode.Sentence() != "":
		msg += " " + res.Mode.Sentence()
	}
	return s.savedAndReturn(c, msg, notReloaded)
}

// checkAddForm checks the typed entries against st, as a save would, and
// sets the form's errors.
func checkAddForm(f *views.AllowForm, st allowlistState) {
	_, _, invalid := app.CheckNewEntries(app.AddEntries{Entries: []string{f.Entries}, Note: f.Note}, st.EntriesIn(scopeFromForm(f.Agents, f.Tools)))
	showEntryProblems(f, invalid)
}

// showEntryProblems puts each problem beside its input: a bad line in the
// list of entries, the note's below the note, an empty form above it.
func showEntryProblems(f *views.AllowForm, invalid *app.ValidationError) {
	f.Errors, f.Error, f.NoteError = nil, "", ""
	if invalid == nil {
		return
	}
	for _, p := range invalid.Problems {
		switch {
		case p.Field == "note":
			f.NoteError = p.Text()
		case p.Code == app.ProblemNoEntries:
			f.Error = "Type at least one entry, one per line, e.g. status.example.com."
		case p.Code == app.ProblemAllowlistFull:
			f.Error = p.Text()
		case p.Field == "agents" || p.Field == "tools" || p.Field == "report_only" || (p.Line == 0 && p.Field == "entries"):
			f.ScopeError = strings.TrimSpace(f.ScopeError + " " + p.Text())
		default:
			f.Errors = append(f.Errors, views.EntryProblem{Line: p.Line, Input: p.Input, Problem: p.Problem, Fix: p.Fix})
		}
	}
}

// addConflict answers a save from a stale page: nothing is saved, the
// admin's input stays as typed, and the form now carries the current
// revision, because the page they get back shows the current list.
func (s *Server) addConflict(c echo.Context, st allowlistState, f *views.AllowForm) error {
	notice := fmt.Sprintf("The allowlist changed while you were editing, in another tab or by another admin (your page showed version %d; it is now at version %d). Nothing was saved. The list below is current: check your entries against it, then press Add entries again.",
		f.Revision, st.Version)
	f.Revision = st.Version
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
	if formRev != st.Version {
		return s.removeRefused(c, st, http.StatusConflict, fmt.Sprintf(
			"The allowlist changed after your page was loaded, in another tab or by another admin (your page showed version %d; it is now at version %d). Nothing was removed. The list below is current: remove %s again if you still want to.",
			formRev, st.Version, text))
	}
	row, entry, ok := st.Find(text)
	if id, err := strconv.ParseInt(c.FormValue("id"), 10, 64); err == nil {
		row, entry, ok = st.RowByID(id)
	}
	if !ok {
		return s.removeRefused(c, st, http.StatusNotFound, fmt.Sprintf("%q is not on the allowlist, so nothing was removed. The list below is current.", text))
	}
	ports := openPorts(st.settings)
	last := removalLen(st.LastNarrowing(), row)
	if c.FormValue("confirmed") != "yes" {
		confirm := views.RemoveConfirm{
			ID: row.ID, Entry: row.Entry, Consequence: removeConsequence(entry, ports, last), Last: last == 1,
			Note: row.Note, AddedBy: row.AddedBy, AddedAt: row.CreatedAt, Revision: st.Version,
		}
		return render(c, http.StatusOK, views.ConfirmRemove(s.shell(c, "Remove "+row.Entry, "integrations"), confirm))
	}
	_, err = s.d.Config.RemoveEntries(ctx, app.RemoveEntries{Entries: []string{row.Entry}, Actor: userOf(c).Name, Version: formRev, Scope: app.ScopeOf(row)})
	var notReloaded *app.NotReloadedError
	switch {
	case errors.Is(err, models.ErrConflict) || errors.Is(err, models.ErrNotFound):
		if st, err = s.loadAllowlist(ctx); err != nil {
			return err
		}
		return s.removeRefused(c, st, http.StatusConflict, fmt.Sprintf(
			"The allowlist changed at the same moment, in another tab or by another admin. Nothing was removed. The list below is current: remove %s again if you still want to.", row.Entry))
	case err != nil && !errors.As(err, &notReloaded):
		return err
	}
	return s.savedAndReturn(c, removedMessage(entry, ports, last), notReloaded)
}

func (s *Server) removeRefused(c echo.Context, st allowlistState, status int, notice string) error {
	p, err := s.egressPage(c, st)
	if err != nil {
		return err
	}
	p.Notice = notice
	return s.renderEgress(c, status, p)
}

// savedAndReturn finishes the POST of a saved change. The operation
// reloaded the running guard; if that failed, the admin is told, because
// the Test a URL box would otherwise show a decision that is not the one
// in force.
func (s *Server) savedAndReturn(c echo.Context, okMessage string, notReloaded *app.NotReloadedError) error {
	if notReloaded != nil {
		s.flash(c, "error", okMessage+" But the running guard did not reload it (the cause is in the server log); it picks the change up at its next check of the database, or restart the console.")
		return redirect(c, "/integrations")
	}
	s.flash(c, "ok", okMessage)
	return redirect(c, "/integrations")
}
