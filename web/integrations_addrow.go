package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/models"
)

// "Add another parameter" is a submit button of the integration form, so
// it works as a plain form: the form comes back as typed, with one more
// empty parameter row, focused, and nothing is saved. app.js adds the row
// in place instead, without the round trip.

// addParamRequested reports whether the form was sent by that button.
func addParamRequested(c echo.Context) bool { return c.FormValue("add_param") == "yes" }

// addParamRow answers that button for a new integration (old nil) or a
// stored one.
func (s *Server) addParamRow(c echo.Context, old *models.Integration) error {
	in := readIntegrationForm(c, old)
	f := &in.form
	f.New = old == nil
	if old != nil {
		f.OriginalName = old.Name
		f.ConfirmRename = c.FormValue("confirm_rename") == "yes"
	}
	// Not a save: the problems a save would find wait until one.
	f.Errors = nil
	submitted, _ := strconv.Atoi(c.FormValue("param_rows"))
	f.BlankParams = max(1, min(submitted, 100)-len(f.Params)+1)
	f.FocusParam = len(f.Params) + 1
	if secretTyped(c) {
		f.FormError = "Secret header values are never sent back to the browser: type them again before saving."
	}
	return s.renderIntegrationForm(c, http.StatusOK, *f)
}

// secretTyped reports whether the form carries a secret header value.
func secretTyped(c echo.Context) bool {
	rows, _ := strconv.Atoi(c.FormValue("secret_rows"))
	for i := range min(rows, 50) {
		if strings.TrimSpace(c.FormValue("secret_value_"+strconv.Itoa(i))) != "" {
			return true
		}
	}
	return false
}
