package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/views"
)

// auditPageSize keeps a page short enough to scan.
const auditPageSize = 50

// auditPage shows the audit trail newest first. Paging is by keyset
// (?before=ID), so a page stays correct while new changes arrive and
// costs the same however deep it is.
func (s *Server) auditPage(c echo.Context) error {
	if done, err := redirectEmptyParams(c); done {
		return err
	}
	var before int64
	if v := c.QueryParam("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return echo.NewHTTPError(http.StatusBadRequest, "The page link is broken: before="+strconv.Quote(v)+" is not a record number. Open Audit again to start from the newest change.")
		}
		before = n
	}
	records, older, err := s.d.Store.ListAudit(c.Request().Context(), before, auditPageSize)
	if err != nil {
		return err
	}
	rows := make([]views.AuditRow, len(records))
	for i, r := range records {
		rows[i] = views.AuditRow{Time: r.Time, Actor: r.Actor, Action: r.Action, Target: r.Target, Before: r.Before, After: r.After}
	}
	return render(c, http.StatusOK, views.Audit(s.shell(c, "Audit", "audit"), views.AuditPage{Rows: rows, Older: older, Paged: before != 0}))
}
