package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
	"github.com/outboundhq/outbound/views"
)

// integrationTest is the Test button: it calls the saved integration
// through the guard, as the signed-in admin, with the sample values typed
// into the box, and shows the answer or the refusal with its fix.
func (s *Server) integrationTest(c echo.Context) error {
	f, row, err := s.storedIntegrationForm(c)
	if err != nil {
		return err
	}
	samples := map[string]string{}
	for i, p := range f.Samples {
		v := c.FormValue("sample_" + p.Name)
		f.Samples[i].Value = v
		samples[p.Name] = v
	}
	res, err := s.d.Config.TestIntegration(c.Request().Context(), app.TestIntegration{Name: row.Name, Samples: samples, Agent: "console:" + userOf(c).Name})
	var unopenable *app.UnopenableError
	switch {
	case errors.As(err, &unopenable):
		f.FormError = fmt.Sprintf("The integration cannot be tested: %v", unopenable.Err)
		return s.renderIntegrationForm(c, http.StatusConflict, f)
	case errors.Is(err, models.ErrNotFound):
		return notFoundIn("There is no integration named "+row.Name+"; someone else deleted it.", "/integrations/http", "See the HTTP integrations")
	case err != nil:
		return err
	}
	f.Result = testResult(&res)
	return s.renderIntegrationForm(c, http.StatusOK, f)
}

func testResult(r *tools.IntegrationResult) *views.IntegrationTestResult {
	out := &views.IntegrationTestResult{OK: r.OK()}
	if r.Method != "" {
		out.Request = r.Method + " " + r.URL
	}
	if ref := r.Refusal; ref != nil {
		out.Code, out.Reason, out.Message, out.Fix = string(ref.Code), string(ref.Reason), ref.Message, ref.Fix
		out.AllowlistFix = ref.Remedy.Kind == guard.RemedyAddEntry
		return out
	}
	out.Status = fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
	switch {
	case r.Binary:
		out.Body = fmt.Sprintf("(%d bytes of binary data, not shown)", r.Bytes)
	case r.Total == 0:
		out.Body = "(empty body)"
	default:
		out.Body = r.Body
	}
	if r.Shown < r.Total {
		out.Note = fmt.Sprintf("The body was cut at %d of %d characters (Settings → Page characters), as agents see it.", r.Shown, r.Total)
	}
	return out
}
