package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// auditFilter is the audit page's filters (actor, action, time range, all
// UTC) read from the query string, as the refusal log reads its own: a
// value that does not parse is explained next to its field, and links to
// other pages carry only the filters that apply.
type auditFilter struct {
	query   models.AuditQuery
	form    views.AuditFilterForm
	applied url.Values
}

func parseAuditFilter(in url.Values, actors, actions []string) auditFilter {
	f := auditFilter{applied: url.Values{}}
	get := func(k string) string { return strings.TrimSpace(in.Get(k)) }
	f.form = views.AuditFilterForm{Actor: get("actor"), Action: get("action"), From: get("from"), To: get("to"),
		Actors: actors, Actions: actions, Errors: map[string]string{}}
	if v := f.form.Actor; v != "" {
		if len(v) > maxFilterValue {
			f.form.Errors["actor"] = fmt.Sprintf("A name is at most %d characters; pick one from the menu.", maxFilterValue)
		} else {
			f.query.Actor = v
			f.applied.Set("actor", v)
		}
	}
	if v := f.form.Action; v != "" {
		if slices.Contains(actions, v) {
			f.query.Action = v
			f.applied.Set("action", v)
		} else {
			f.form.Errors["action"] = fmt.Sprintf("%q is not an action in the audit trail; pick one from the menu, e.g. allowlist.add.", v)
		}
	}
	if v := f.form.From; v != "" {
		if b, ok := parseTimeBound(v); ok {
			f.form.From = inputValue(b.at, b.step)
			f.query.Since = b.at
			f.applied.Set("from", f.form.From)
		} else {
			f.form.Errors["from"] = badTime(v)
		}
	}
	if v := f.form.To; v != "" {
		if b, ok := parseTimeBound(v); ok {
			if b.step == 24*time.Hour { // a bare date: through its last minute
				b = timeBound{b.at.Add(24*time.Hour - time.Minute), time.Minute}
			}
			f.form.To = inputValue(b.at, b.step)
			f.query.Until = b.at.Add(b.step)
			f.applied.Set("to", f.form.To)
		} else {
			f.form.Errors["to"] = badTime(v)
		}
	}
	if !f.query.Since.IsZero() && !f.query.Until.IsZero() && !f.query.Until.After(f.query.Since) {
		f.form.Errors["to"] = fmt.Sprintf("To (%s) is before From (%s); pick a later To or an earlier From.", f.form.To, f.form.From)
	}
	f.form.Filtered = len(f.applied) > 0
	return f
}

// href links to the audit page with this filter and a cursor.
func (f auditFilter) href(before int64) string {
	v := url.Values{}
	for k, vals := range f.applied {
		v[k] = vals
	}
	if before != 0 {
		v.Set("before", strconv.FormatInt(before, 10))
	}
	if len(v) == 0 {
		return "/audit"
	}
	return "/audit?" + v.Encode()
}
