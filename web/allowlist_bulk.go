package web

// The allowlist's list tools: search, note editing and removing several
// entries at once. Changes go through the application layer like every
// other (checked against the page's revision, audited); searching only
// hides rows of the page.

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// maxSearch bounds the search text: entries and notes are short.
const maxSearch = 200

// applySearch hides the rows whose entry and note do not contain q (any
// case). The card still counts every entry: the list in force is the
// whole list, whatever the page shows.
func applySearch(card *views.EgressCard, q string) {
	q = strings.TrimSpace(q)
	if len(q) > maxSearch {
		q = q[:maxSearch]
	}
	card.Query, card.Shown = q, 0
	needle := strings.ToLower(q)
	for i := range card.Entries {
		r := &card.Entries[i]
		r.Hidden = needle != "" && !strings.Contains(strings.ToLower(r.Entry+" "+r.Note), needle)
		if !r.Hidden {
			card.Shown++
		}
	}
}

// removeSelected removes the ticked entries: a confirmation page listing
// them all (app.js asks in place instead), then one all-or-nothing remove
// with an audit record each.
func (s *Server) removeSelected(c echo.Context) error {
	ctx := c.Request().Context()
	formRev, err := formRevision(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	st, err := s.loadAllowlist(ctx)
	if err != nil {
		return err
	}
	var picked []string
	for _, v := range form["entry"] {
		if v = strings.TrimSpace(v); v != "" {
			picked = append(picked, v)
		}
	}
	if len(picked) == 0 {
		return s.removeRefused(c, st, http.StatusUnprocessableEntity, "No entry was selected, so nothing was removed. Tick the entries to remove in the list, then press Remove selected.")
	}
	if formRev != st.Version {
		return s.removeRefused(c, st, http.StatusConflict, fmt.Sprintf(
			"The allowlist changed after your page was loaded, in another tab or by another admin (your page showed version %d; it is now at version %d). Nothing was removed. The list below is current: select the entries again if you still want to remove them.",
			formRev, st.Version))
	}
	ports := openPorts(st.settings)
	confirm := views.RemoveManyConfirm{Revision: st.Version}
	seen := map[string]bool{}
	for _, text := range picked {
		row, entry, ok := st.Find(text)
		if !ok {
			return s.removeRefused(c, st, http.StatusNotFound, fmt.Sprintf("%q is not on the allowlist, so nothing was removed. The list below is current.", text))
		}
		if !seen[row.Entry] {
			seen[row.Entry] = true
			confirm.Entries = append(confirm.Entries, views.AllowRow{Entry: row.Entry, Scope: entryScope(entry, ports)})
		}
	}
	confirm.Empties = len(confirm.Entries) == len(st.Rows)
	if c.FormValue("confirmed") != "yes" {
		return render(c, http.StatusOK, views.ConfirmRemoveMany(s.shell(c, "Remove entries", "integrations"), confirm))
	}
	names := make([]string, len(confirm.Entries))
	for i, e := range confirm.Entries {
		names[i] = e.Entry
	}
	res, err := s.d.Config.RemoveEntries(ctx, app.RemoveEntries{Entries: names, Actor: userOf(c).Name, Version: formRev})
	var notReloaded *app.NotReloadedError
	var conflict *app.ConflictError
	var missing *app.NotFoundError
	switch {
	case errors.As(err, &conflict), errors.As(err, &missing):
		if st, err = s.loadAllowlist(ctx); err != nil {
			return err
		}
		return s.removeRefused(c, st, http.StatusConflict,
			"The allowlist changed at the same moment, in another tab or by another admin. Nothing was removed. The list below is current: select the entries again if you still want to remove them.")
	case err != nil && !errors.As(err, &notReloaded):
		return err
	}
	msg := fmt.Sprintf("Removed %s: %s. Agents can no longer reach %s.", plural(len(names), "entry", "entries"), strings.Join(names, ", "), pronoun(len(names)))
	if res.PublicWeb {
		msg += " The list is empty: the console is back on PUBLIC WEB, where agents reach any public host."
	}
	return s.savedAndReturn(c, msg, notReloaded)
}

// noteForm shows the note editor of the entry named in the query.
func (s *Server) noteForm(c echo.Context) error {
	st, err := s.loadAllowlist(c.Request().Context())
	if err != nil {
		return err
	}
	text := strings.TrimSpace(c.QueryParam("entry"))
	row, _, ok := st.Find(text)
	if !ok {
		return s.removeRefused(c, st, http.StatusNotFound, fmt.Sprintf("%q is not on the allowlist, so it has no note to edit. The list below is current.", text))
	}
	return s.renderNoteForm(c, http.StatusOK, views.NoteForm{Entry: row.Entry, Note: row.Note, Revision: st.Version, AddedBy: row.AddedBy, AddedAt: row.CreatedAt})
}

func (s *Server) renderNoteForm(c echo.Context, status int, f views.NoteForm) error {
	return render(c, status, views.EditNote(s.shell(c, "Note of "+f.Entry, "integrations"), f))
}

// saveNote stores the note; a problem or a conflict shows the form again
// with the note as typed.
func (s *Server) saveNote(c echo.Context) error {
	ctx := c.Request().Context()
	formRev, err := formRevision(c)
	if err != nil {
		return err
	}
	text, note := strings.TrimSpace(c.FormValue("entry")), c.FormValue("note")
	_, err = s.d.Config.SetEntryNote(ctx, app.SetEntryNote{Entry: text, Note: note, Actor: userOf(c).Name, Version: formRev})
	var invalid *app.ValidationError
	var conflict *app.ConflictError
	var missing *app.NotFoundError
	switch {
	case err == nil:
		s.flash(c, "ok", "Saved the note of "+text+". What agents reach did not change.")
		return redirect(c, "/integrations")
	case errors.As(err, &missing), errors.Is(err, models.ErrNotFound):
		st, lerr := s.loadAllowlist(ctx)
		if lerr != nil {
			return lerr
		}
		return s.removeRefused(c, st, http.StatusNotFound, fmt.Sprintf("%q is no longer on the allowlist (another admin removed it), so the note was not saved. The list below is current.", text))
	}
	st, lerr := s.loadAllowlist(ctx)
	if lerr != nil {
		return lerr
	}
	row, _, _ := st.Find(text)
	f := views.NoteForm{Entry: row.Entry, Note: note, Revision: formRev, AddedBy: row.AddedBy, AddedAt: row.CreatedAt}
	switch {
	case errors.As(err, &invalid):
		f.Error = invalid.Problems[0].Text()
		return s.renderNoteForm(c, http.StatusUnprocessableEntity, f)
	case errors.As(err, &conflict):
		f.Revision = st.Version
		f.Notice = fmt.Sprintf("The allowlist changed while you were editing, in another tab or by another admin. Nothing was saved. The note stored now is %q; yours is kept below: press Save note again to replace it.", row.Note)
		return s.renderNoteForm(c, http.StatusConflict, f)
	}
	return err
}
