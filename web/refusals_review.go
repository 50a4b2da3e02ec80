package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// maxReviewComment bounds a review comment: room for a paragraph of
// reasoning and a ticket link, not for pasting whole emails into the log.
const maxReviewComment = 1000

// reviewRefusal records support's verdict on a refusal. An invalid status
// or an overlong comment re-renders the detail page with the input kept
// and nothing saved.
func (s *Server) reviewRefusal(c echo.Context) error {
	r, err := s.refusalFromPath(c)
	if err != nil {
		return err
	}
	status := strings.TrimSpace(c.FormValue("status"))
	comment := strings.TrimSpace(strings.ReplaceAll(c.FormValue("comment"), "\r\n", "\n"))
	back := backQuery(c.FormValue("back"))

	problems := map[string]string{}
	st := models.ReviewStatus(status)
	switch {
	case status == "":
		problems["status"] = "Choose what this refusal was: Expected (attack), Needs access or Reviewed."
	case st == models.StatusUnreviewed || !st.Valid():
		problems["status"] = fmt.Sprintf("%q is not a review status; choose Expected (attack), Needs access or Reviewed.", status)
	}
	if n := utf8.RuneCountInString(comment); n > maxReviewComment {
		problems["comment"] = fmt.Sprintf("The comment is %d characters; shorten it to at most %d, or link to a ticket instead.", n, maxReviewComment)
	}
	if len(problems) > 0 {
		vm := s.detailView(c, r, back)
		vm.Review.Status, vm.Review.Comment, vm.Review.Errors = status, comment, problems
		return render(c, http.StatusUnprocessableEntity, views.RefusalDetailPage(s.shell(c, "Refusal "+strconv.FormatInt(r.ID, 10), "refusals"), vm))
	}
	if err := s.d.Store.ReviewRefusal(c.Request().Context(), r.ID, st, comment, userOf(c).Name); err != nil {
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
