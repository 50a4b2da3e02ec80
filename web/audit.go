package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/views"
)

// auditPageSize keeps a page short enough to scan.
const auditPageSize = 50

// auditPage shows the audit trail newest first, filtered by actor, action
// and time (audit_filter.go). Paging is by keyset (?before=ID), so a page
// stays correct while new changes arrive and costs the same however deep
// it is.
func (s *Server) auditPage(c echo.Context) error {
	if done, err := redirectEmptyParams(c); done {
		return err
	}
	ctx := c.Request().Context()
	var before int64
	if v := c.QueryParam("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return echo.NewHTTPError(http.StatusBadRequest, "The page link is broken: before="+strconv.Quote(v)+" is not a record number. Open Audit again to start from the newest change.")
		}
		before = n
	}
	actors, actions, err := s.d.Store.AuditFacets(ctx)
	if err != nil {
		return err
	}
	f := parseAuditFilter(c.QueryParams(), actors, actions)
	p := views.AuditPage{Filter: f.form, Paged: before != 0, NewestHref: f.href(0)}
	if len(f.form.Errors) > 0 {
		// No rows rather than the rows the valid filters select: a
		// mistyped filter must not pass for the whole trail.
		return render(c, http.StatusBadRequest, views.Audit(s.shell(c, "Audit", "audit"), p))
	}
	q := f.query
	q.BeforeID, q.Limit = before, auditPageSize
	records, older, err := s.d.Store.ListAuditWhere(ctx, q)
	if err != nil {
		return err
	}
	if older != 0 {
		p.OlderHref = f.href(older)
	}
	p.Rows = make([]views.AuditRow, len(records))
	for i, r := range records {
		p.Rows[i] = views.AuditRow{Time: r.Time, Actor: r.Actor, Action: r.Action, Target: r.Target, Before: r.Before, After: r.After}
	}
	return render(c, http.StatusOK, views.Audit(s.shell(c, "Audit", "audit"), p))
}
