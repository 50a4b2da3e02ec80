package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/views"
)

// retentionKey is the one setting whose shrinking destroys data, so the
// page warns about it.
const retentionKey = "retention_days"

const retentionWarning = "Shrinking this deletes every refusal older than the new number of days at the next purge (within an hour). Deleted refusals cannot be restored."

func (s *Server) loadSettings(c echo.Context) (app.SettingsState, error) {
	st, err := s.d.Config.StoredSettings(c.Request().Context())
	if err == nil && st.Invalid != nil {
		// A bad stored value (written by hand, or by a newer binary) must
		// not lock the admin out of the page that fixes it; start from the
		// values that parse and let the form show the rest.
		s.d.Log.Warn("stored settings do not parse; the Settings page shows the defaults until they are saved again", "err", st.Invalid)
	}
	return st, err
}

// settingsForm builds the form from stored values, overlaid with typed
// input and per-key errors when a submission is shown again.
func settingsForm(st app.SettingsState, typed, errs map[string]string) views.SettingsForm {
	defaults := tools.DefaultSettings()
	f := views.SettingsForm{Revision: st.Version}
	for _, d := range tools.SettingDefs {
		fd := views.SettingField{
			Key: d.Key, Label: d.Label, Help: d.Help,
			Value: st.Values[d.Key], Stored: st.Values[d.Key], Default: defaults.Value(d.Key),
			Error: errs[d.Key],
		}
		if v, ok := typed[d.Key]; ok {
			fd.Value = v
		}
		for _, c := range tools.SettingChoices(d.Key) {
			fd.Choices = append(fd.Choices, views.SettingChoice{Value: c.Value, Label: c.Label})
		}
		if d.Key == retentionKey {
			fd.Warning = retentionWarning
			if n, ok := shrunk(fd.Stored, fd.Value); ok {
				fd.Warning = fmt.Sprintf("You are shrinking the retention from %s to %d days: once saved, refusals older than %d days will be deleted at the next purge (within an hour).", fd.Stored, n, n)
			}
		}
		f.Fields = append(f.Fields, fd)
	}
	return f
}

func (s *Server) settingsPage(c echo.Context) error {
	st, err := s.loadSettings(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.Settings(s.shell(c, "Settings", "settings"), settingsForm(st, nil, nil)))
}

func (s *Server) saveSettings(c echo.Context) error {
	ctx := c.Request().Context()
	st, err := s.loadSettings(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The settings form could not be read. Open Settings again and redo your change.")
	}
	// The page always sends every key. A key left out (a script posting
	// one value) keeps its stored value: an absent field must not mean
	// "empty", which for ports would silently close them.
	typed := map[string]string{}
	for _, d := range tools.SettingDefs {
		typed[d.Key] = st.Values[d.Key]
		if v, ok := form[d.Key]; ok && len(v) > 0 {
			typed[d.Key] = v[0]
		}
	}
	expect, err := strconv.ParseInt(c.FormValue("revision"), 10, 64)
	if err != nil || expect < 0 {
		return echo.NewHTTPError(http.StatusBadRequest, "The settings form was incomplete (its revision is missing). Open Settings again and redo your change.")
	}
	again := func(status int, errs map[string]string, formErr string) error {
		f := settingsForm(st, typed, errs)
		f.Error = formErr
		return render(c, status, views.Settings(s.shell(c, "Settings", "settings"), f))
	}

	saved, err := s.d.Config.SetSettings(ctx, app.SetSettings{Values: typed, Actor: userOf(c).Name, Version: expect})
	var invalid *app.ValidationError
	var notReloaded *app.NotReloadedError
	switch {
	case errors.As(err, &invalid):
		if p := invalid.Problems[0]; p.Code == app.ProblemSettingsTogether {
			return again(http.StatusUnprocessableEntity, nil, "These values do not work together: "+p.Problem+". Nothing was saved.")
		}
		errs := map[string]string{}
		for _, p := range invalid.Problems {
			errs[p.Field] = p.Text()
		}
		return again(http.StatusUnprocessableEntity, errs,
			plural(len(errs), "setting is", "settings are")+" not valid, so nothing was saved. Correct the marked values and save again.")
	case errors.Is(err, models.ErrConflict):
		// Show what is in force now next to what was typed, and base the
		// next save on the new revision: saving again is a deliberate
		// overwrite after seeing the other change.
		if st, err = s.loadSettings(c); err != nil {
			return err
		}
		return again(http.StatusConflict, nil, "Someone else changed the configuration after you opened this page, so nothing was saved. Your input is kept below, next to the values now in force; check them and save again.")
	case errors.As(err, &notReloaded):
		s.flash(c, "error", "The settings were saved, but the running guard could not load them; the cause is in the server log. Until it is fixed, the previous settings stay in force.")
		return redirect(c, "/settings")
	case err != nil:
		return err
	}
	if len(saved.Changes) == 0 {
		s.flash(c, "ok", "Nothing changed: every value is the one already in force.")
		return redirect(c, "/settings")
	}
	s.flash(c, "ok", savedMessage(saved.Changes))
	return redirect(c, "/settings")
}

// savedMessage sums up a save, and warns when the retention shrank.
func savedMessage(changes []app.SettingChange) string {
	parts := make([]string, len(changes))
	var warn string
	for i, r := range changes {
		parts[i] = fmt.Sprintf("%s %s → %s", r.Key, shown(r.Before), shown(r.After))
		if n, ok := shrunk(r.Before, r.After); ok && r.Key == retentionKey {
			warn = fmt.Sprintf(" Refusals older than %d days will be deleted at the next purge (within an hour).", n)
		}
	}
	return "Saved and in force now: " + strings.Join(parts, "; ") + "." + warn
}

// shrunk reports whether a retention of before days becomes a smaller
// valid number of days, and that number.
func shrunk(before, after string) (int, bool) {
	b, errB := strconv.Atoi(strings.TrimSpace(before))
	a, errA := strconv.Atoi(strings.TrimSpace(after))
	return a, errB == nil && errA == nil && a >= 1 && a < b
}

// shown prints an empty value (no extra ports) visibly.
func shown(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
