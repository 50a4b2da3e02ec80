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
	"github.com/outboundhq/outbound/views"
)

// reviewSelected gives the refusals ticked in the log one verdict, through
// the application layer (all or none, audited), and returns to the log
// with its filters. A review it cannot save shows its own page with the
// selection and the comment kept.
func (s *Server) reviewSelected(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	var ids []int64
	for _, v := range form["id"] {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || id < 1 {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("The form named refusal %q, which is not a refusal ID. Open the refusal log again and tick the refusals there.", v))
		}
		ids = append(ids, id)
	}
	status := strings.TrimSpace(c.FormValue("verdict"))
	comment := strings.TrimSpace(strings.ReplaceAll(c.FormValue("comment"), "\r\n", "\n"))
	back := backQuery(c.FormValue("back"))
	st := models.ReviewStatus(status)
	n, err := s.d.Refusals.ReviewRefusals(c.Request().Context(), userOf(c).Name, ids, st, comment)
	var problems app.ReviewProblems
	var missing *models.NotFoundError
	switch {
	case errors.As(err, &problems):
		f := views.RefusalBulkForm{IDs: ids, Status: status, Comment: comment, Back: back, BackHref: backToLog(back), MaxComment: app.MaxReviewComment, Errors: problems}
		if len(ids) == 0 {
			f.Errors["refusals"] = "No refusal was selected. Go back to the log, tick the refusals to review, then press Review selected."
		}
		return render(c, http.StatusUnprocessableEntity, views.RefusalBulkReviewPage(s.shell(c, "Review refusals", "refusals"), f))
	case errors.As(err, &missing):
		return notFoundIn(fmt.Sprintf("Refusal %s is no longer in the log (it was purged after the retention period), so nothing was reviewed. Tick the refusals again.", missing.Value), backToLog(back), "Back to the log")
	case err != nil:
		return err
	}
	s.flash(c, "ok", fmt.Sprintf("%s marked %s.", plural(n, "refusal", "refusals"), reviewLabelOf(st)))
	return redirect(c, backToLog(back))
}

// backToLog is the log with the filters of back (a query string).
func backToLog(back string) string {
	if back == "" {
		return "/refusals"
	}
	return "/refusals?" + back
}
