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

// reviewRefusal records support's verdict on a refusal through the
// application layer, which audits it. A review it rejects (no status, an
// overlong comment) re-renders the detail page with the input kept and
// nothing saved.
func (s *Server) reviewRefusal(c echo.Context) error {
	r, err := s.refusalFromPath(c)
	if err != nil {
		return err
	}
	status := strings.TrimSpace(c.FormValue("status"))
	comment := strings.TrimSpace(strings.ReplaceAll(c.FormValue("comment"), "\r\n", "\n"))
	back := backQuery(c.FormValue("back"))
	st := models.ReviewStatus(status)
	err = s.d.Refusals.ReviewRefusal(c.Request().Context(), userOf(c).Name, r.ID, st, comment)
	var problems app.ReviewProblems
	if errors.As(err, &problems) {
		vm := s.detailView(c, r, back)
		vm.Review.Status, vm.Review.Comment, vm.Review.Errors = status, comment, problems
		return render(c, http.StatusUnprocessableEntity, views.RefusalDetailPage(s.shell(c, "Refusal "+strconv.FormatInt(r.ID, 10), "refusals"), vm))
	}
	if err != nil {
		return err
	}
	s.flash(c, "ok", fmt.Sprintf("Refusal %d marked %s.", r.ID, reviewLabelOf(st)))
	return redirect(c, detailHref(r.ID, back))
}

// reviewLabelOf is a status as the pages name it.
func reviewLabelOf(st models.ReviewStatus) string {
	for _, o := range views.ReviewStatuses {
		if o.Value == string(st) {
			return o.Label
		}
	}
	return "Unreviewed"
}
