package web

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// refusalCSVHeader names the export's columns, one per stored field.
// Lists are joined here, when the cell is written, and nowhere else:
// addresses by commas, the redirect chain one URL per line.
var refusalCSVHeader = []string{
	"id", "time_utc", "tool", "proxied", "agent", "thread", "trigger", "url", "host", "port", "addresses",
	"code", "reason", "kind", "message", "fix", "remedy", "remedy_value", "entry", "redirects",
	"review_status", "comment", "reviewed_by", "reviewed_at_utc",
	"ticket", "integration", "count", "last_time_utc",
}

// csvFlushEvery is how many rows go out before the response is flushed, so
// a long export starts downloading at once and memory stays flat.
const csvFlushEvery = 500

// refusalCSV streams every refusal of the filtered view as CSV. Filters that
// do not parse refuse the export (400) rather than silently exporting more
// than the admin asked for.
func (s *Server) refusalCSV(c echo.Context) error {
	f := parseRefusalFilter(c.QueryParams())
	if !f.ok() {
		return echo.NewHTTPError(http.StatusBadRequest, "The export was not started because a filter is wrong. "+f.problems()+" Fix the filter on the refusal log and export again.")
	}
	name := "refusals-" + s.d.Now().UTC().Format("2006-01-02") + ".csv"
	if f.would {
		name = "would-refuse-" + s.d.Now().UTC().Format("2006-01-02") + ".csv"
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)

	w := csv.NewWriter(c.Response())
	w.UseCRLF = true // RFC 4180 line breaks
	n := 0
	row := func(rec []string) error {
		if err := w.Write(rec); err != nil {
			return err
		}
		if n++; n%csvFlushEvery == 0 {
			w.Flush()
			c.Response().Flush()
		}
		return w.Error()
	}
	var err error
	if f.would {
		if err := w.Write(wouldRefusalCSVHeader); err != nil {
			return err
		}
		err = s.d.Store.EachWouldRefusal(c.Request().Context(), f.query, func(r *models.WouldRefusal) error {
			return row(wouldRefusalCSVRecord(app.LoggedWouldRefusalOf(*r)))
		})
	} else {
		if err := w.Write(refusalCSVHeader); err != nil {
			return err
		}
		err = s.d.Store.EachRefusal(c.Request().Context(), f.query, func(r *models.Refusal) error {
			return row(refusalCSVRecord(app.LoggedRefusalOf(*r)))
		})
	}
	w.Flush()
	if err == nil {
		err = w.Error()
	}
	if err != nil {
		// The status line is gone; a cut-short download is all the browser
		// can be told, so the cause goes to the log.
		s.d.Log.Error("refusal export cut short", "rows", n, "err", err)
	}
	return nil
}

func refusalCSVRecord(r app.LoggedRefusal) []string {
	reviewed := ""
	if r.ReviewedAt != nil {
		reviewed = r.ReviewedAt.UTC().Format(time.RFC3339)
	}
	remedy := string(r.Remedy.Kind)
	if remedy == "" {
		remedy = "none"
	}
	rec := []string{
		strconv.FormatInt(r.ID, 10), r.Time.UTC().Format(time.RFC3339), r.Tool, strconv.FormatBool(r.Proxied), r.Agent, r.Thread, r.Trigger,
		r.URL, r.Host, strconv.Itoa(int(r.Port)), strings.Join(addrTexts(r.Addresses), ","), string(r.Code), string(r.Reason),
		string(r.KindOf()), r.Message, r.Fix, remedy, r.Remedy.Value(), r.Entry,
		strings.Join(r.Redirects, "\n"), csvStatus(models.ReviewStatus(r.Status)), r.Comment, r.ReviewedBy, reviewed,
		r.Ticket, r.Service, strconv.FormatInt(max(r.Count, 1), 10), lastTimeText(r.LastTime),
	}
	for i := range rec {
		rec[i] = spreadsheetSafe(rec[i])
	}
	return rec
}

// lastTimeText is an aggregated row's last time for the export; "" for a
// single refusal.
func lastTimeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// spreadsheetSafe defuses formula injection: a refused URL, agent name or
// comment is attacker-influenced text, and a spreadsheet runs a cell that
// starts with = + - @ (or a tab or carriage return that hides one) as a
// formula. A leading apostrophe makes it text again.
func spreadsheetSafe(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// csvStatus names the review status as the filter does: a blank cell would
// read as missing data in a spreadsheet, not as "nobody looked yet".
func csvStatus(st models.ReviewStatus) string {
	if st == models.StatusUnreviewed {
		return "unreviewed"
	}
	return string(st)
}
