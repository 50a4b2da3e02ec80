package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// refusalFilterKeys are the query parameters that filter the refusal log,
// in the order they are written into links.
var refusalFilterKeys = []string{"outcome", "code", "reason", "kind", "tool", "agent", "host", "from", "to", "status", "ticket", "q"}

// The log's outcomes: refused (the default, no parameter), and requests
// that were allowed but that report-only entries would have refused.
const outcomeWouldRefuse = "would_refuse"

// integrationTool is the tool filter's prefix for one integration:
// tool=integration:crm is the calls made for the integration crm.
const integrationTool = "integration:"

// kindOptions are the values of the kind filter: a refusal of the policy,
// or a failure of the network.
var kindOptions = func() []string {
	out := make([]string, len(guard.Kinds))
	for i, k := range guard.Kinds {
		out[i] = string(k)
	}
	return out
}()

// maxFilterValue bounds free-text filter values. No tool, agent or reason
// name is this long; a longer value is a pasted mistake.
const maxFilterValue = 200

// refusalFilter is the refusal log's filter as read from a URL.
type refusalFilter struct {
	// query holds the filters that parsed; the page and the CSV apply it.
	query models.RefusalQuery
	// form echoes every value as typed, with an error for each that did
	// not parse, so a mistake is corrected in place.
	form views.RefusalFilterForm
	// applied are the parsed values in canonical form, for links that
	// carry the same view to another page.
	applied url.Values
	// would is the "would refuse" outcome: the rows are would-be
	// refusals (refusals_would.go), not refusals.
	would bool
}

// parseRefusalFilter reads the log's filters from a query string. A value
// that does not parse is left out of the query and explained next to its
// field; every other filter still applies.
func parseRefusalFilter(in url.Values) refusalFilter {
	f := refusalFilter{applied: url.Values{}}
	get := func(key string) string { return strings.TrimSpace(in.Get(key)) }
	f.form = views.RefusalFilterForm{
		Code: get("code"), Reason: get("reason"), Kind: get("kind"), Tool: get("tool"), Agent: get("agent"),
		Host: get("host"), From: get("from"), To: get("to"), Status: get("status"),
		Errors: map[string]string{},
	}
	fail := func(key, msg string) { f.form.Errors[key] = msg }
	keep := func(key, v string) { f.applied.Set(key, v) }
	f.parseOutcome(get("outcome"))

	if v := f.form.Code; v != "" {
		if slices.Contains(guard.Codes, guard.Code(v)) {
			f.query.Code = v
			keep("code", v)
		} else {
			fail("code", fmt.Sprintf("%q is not a refusal code; choose one of %s.", v, codeList()))
		}
	}
	if v := f.form.Kind; v != "" {
		if slices.Contains(kindOptions, v) {
			f.query.Kind = v
			keep("kind", v)
		} else {
			fail("kind", fmt.Sprintf("%q is not a kind; choose policy (refused by the policy) or network (the network failed).", v))
		}
	}
	for _, p := range []struct {
		key   string
		dst   *string
		label string
	}{{"reason", &f.query.Reason, "A reason"}, {"tool", &f.query.Tool, "A tool name"}, {"agent", &f.query.Agent, "An agent name"}} {
		switch v := get(p.key); {
		case v == "":
		case utf8.RuneCountInString(v) > maxFilterValue:
			fail(p.key, fmt.Sprintf("%s is at most %d characters; this one has %d. Pick one from the menu.", p.label, maxFilterValue, utf8.RuneCountInString(v)))
		default:
			*p.dst = v
			keep(p.key, v)
		}
	}
	if v := f.form.Host; v != "" {
		host, exact, problem := parseHostFilter(v)
		if problem != "" {
			fail("host", problem)
		} else {
			f.query.Host, f.query.HostExact = host, exact
			keep("host", v)
		}
	}
	if v := f.query.Tool; strings.HasPrefix(v, integrationTool) {
		name := strings.TrimSpace(strings.TrimPrefix(v, integrationTool))
		if name == "" {
			fail("tool", "integration: names no integration; write integration:NAME, e.g. integration:crm, or pick a tool from the menu.")
			f.applied.Del("tool")
		}
		f.query.Tool, f.query.Integration = "", name
	}
	f.parseTimes()
	f.parseTicketAndSearch(get("ticket"), get("q")) // refusals_ticket.go
	if v := f.form.Status; v != "" {
		switch st := models.ReviewStatus(v); {
		case v == "unreviewed":
			f.query.Unreviewed = true
			keep("status", v)
		case st != models.StatusUnreviewed && st.Valid():
			f.query.Status = st
			keep("status", v)
		default:
			fail("status", fmt.Sprintf("%q is not a review status; use unreviewed, expected, needs_access or reviewed.", v))
		}
	}
	if f.would {
		f.refuseReviewFilters()
	}
	return f
}

// parseOutcome reads which rows the log shows: refusals, or would-be
// refusals of report-only entries.
func (f *refusalFilter) parseOutcome(v string) {
	f.form.Outcome = v
	switch v {
	case "", "refused":
		f.form.Outcome = ""
	case outcomeWouldRefuse:
		f.would = true
		f.applied.Set("outcome", v)
	default:
		f.form.Errors["outcome"] = fmt.Sprintf("%q is not an outcome; use refused (the default) or would_refuse (allowed, but report-only entries would refuse it).", v)
	}
}

// refuseReviewFilters explains the filters a would-be refusal cannot
// match: it was allowed, so it has no review, no kind, and no code or
// reason to choose among (report-only entries refuse one way).
func (f *refusalFilter) refuseReviewFilters() {
	for _, k := range []string{"code", "reason", "kind", "status"} {
		if f.applied.Get(k) != "" {
			f.form.Errors[k] = refusalFilterLabels[k] + " does not apply to would-be refusals: they were allowed. Clear it, or switch to Refused."
			f.applied.Del(k)
		}
	}
	f.query.Code, f.query.Reason, f.query.Kind, f.query.Status, f.query.Unreviewed = "", "", "", models.StatusUnreviewed, false
}

func codeList() string {
	names := make([]string, len(guard.Codes))
	for i, c := range guard.Codes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// parseHostFilter reads the host field: a substring, or an exact host name
// in double quotes. Host names are stored in lower case, so an exact match
// is made in lower case too. problem is a sentence for the user, or "".
func parseHostFilter(v string) (host string, exact bool, problem string) {
	if n := utf8.RuneCountInString(v); n > 255 {
		return "", false, fmt.Sprintf("A host name is at most 253 characters; this one has %d.", n)
	}
	quoted := strings.HasPrefix(v, `"`)
	if !quoted && !strings.HasSuffix(v, `"`) {
		return v, false, ""
	}
	if len(v) < 2 || !quoted || !strings.HasSuffix(v, `"`) {
		return "", false, v + ` has an unmatched double quote; write "host.example" for an exact match, or leave the quotes out to match part of a name.`
	}
	inner := strings.TrimSpace(v[1 : len(v)-1])
	if inner == "" {
		return "", false, `The quotes hold no host name; write one between them, like "intranet.corp".`
	}
	return strings.ToLower(inner), true, ""
}

// Layouts accepted for the time range: what a datetime-local input sends,
// the same with a space (typed by hand), and a bare date.
var (
	minuteLayouts = []string{"2006-01-02T15:04", "2006-01-02 15:04"}
	secondLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05"}
)

// timeBound is one parsed end of the time range.
type timeBound struct {
	at time.Time
	// step is the precision the value was written in: "to" includes the
	// whole of its last day, minute or second.
	step time.Duration
}

// parseTimeBound reads a UTC date or date and time. ok is false when v is
// none of the accepted layouts.
func parseTimeBound(v string) (b timeBound, ok bool) {
	if t, err := time.ParseInLocation("2006-01-02", v, time.UTC); err == nil {
		return timeBound{t, 24 * time.Hour}, true
	}
	for _, l := range minuteLayouts {
		if t, err := time.ParseInLocation(l, v, time.UTC); err == nil {
			return timeBound{t, time.Minute}, true
		}
	}
	for _, l := range secondLayouts {
		if t, err := time.ParseInLocation(l, v, time.UTC); err == nil {
			return timeBound{t, time.Second}, true
		}
	}
	return timeBound{}, false
}

func badTime(v string) string {
	return fmt.Sprintf("%q is not a date or time; write it as 2025-03-01 or 2025-03-01T14:30 (UTC).", v)
}

// parseTimes fills Since and Until. From is inclusive from its first
// instant; To is inclusive to the end of the day, minute or second it
// names, which is what "to 2025-03-01" means to a reader.
func (f *refusalFilter) parseTimes() {
	var from, to *timeBound
	if v := f.form.From; v != "" {
		b, ok := parseTimeBound(v)
		if !ok {
			f.form.Errors["from"] = badTime(v)
		} else {
			from = &b
			f.form.From = inputValue(b.at, b.step)
		}
	}
	if v := f.form.To; v != "" {
		b, ok := parseTimeBound(v)
		if !ok {
			f.form.Errors["to"] = badTime(v)
		} else {
			// A bare date becomes its last minute: the input cannot hold a
			// date alone, and to 23:59 inclusive is the same whole day.
			if b.step == 24*time.Hour {
				b = timeBound{b.at.Add(24*time.Hour - time.Minute), time.Minute}
			}
			to = &b
			f.form.To = inputValue(b.at, b.step)
		}
	}
	if from != nil && to != nil && !to.at.Add(to.step).After(from.at) {
		f.form.Errors["to"] = fmt.Sprintf("To (%s) is before From (%s); pick a later To or an earlier From.", f.form.To, f.form.From)
		to = nil
	}
	if from != nil {
		f.query.Since = from.at
		f.applied.Set("from", f.form.From)
	}
	if to != nil {
		f.query.Until = to.at.Add(to.step)
		f.applied.Set("to", f.form.To)
	}
}

// inputValue writes t the way a datetime-local input holds it.
func inputValue(t time.Time, step time.Duration) string {
	if step == time.Second {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04")
}

// ok reports whether every filter parsed.
func (f refusalFilter) ok() bool { return len(f.form.Errors) == 0 }

// problems lists the filter errors in field order, for the CSV export,
// which has no form to show them next to.
func (f refusalFilter) problems() string {
	var out []string
	for _, k := range refusalFilterKeys {
		if msg := f.form.Errors[k]; msg != "" {
			out = append(out, k+": "+msg)
		}
	}
	return strings.Join(out, " ")
}

// refusalFilterLabels are the filter form's labels, by query key.
var refusalFilterLabels = map[string]string{
	"outcome": "Outcome", "code": "Code", "reason": "Reason", "kind": "Kind", "tool": "Tool", "agent": "Agent",
	"host": "Host", "from": "From", "to": "To", "status": "Review",
	"ticket": "Ticket", "q": "Search",
}

// badFields names the filters that did not parse, by their labels, in
// the form's order.
func (f refusalFilter) badFields() []string {
	var out []string
	for _, k := range refusalFilterKeys {
		if f.form.Errors[k] != "" {
			out = append(out, refusalFilterLabels[k])
		}
	}
	return out
}

// filtered reports whether any filter applies (the outcome is a view of
// the log, not a filter of it).
func (f refusalFilter) filtered() bool {
	n := len(f.applied)
	if f.applied.Has("outcome") {
		n--
	}
	return n > 0
}

// href links to path with this filter and the extra parameters (a cursor).
func (f refusalFilter) href(path string, extra ...string) string {
	v := url.Values{}
	for k, vals := range f.applied {
		v[k] = vals
	}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// parseCursor reads the page cursor: before (older) or after (newer), a
// positive refusal ID, never both. problem is a sentence for the user, or "".
func parseCursor(in url.Values) (before, after int64, problem string) {
	read := func(key string) (int64, string) {
		v := strings.TrimSpace(in.Get(key))
		if v == "" {
			return 0, ""
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return 0, fmt.Sprintf("The page link's %s=%q is not a refusal ID; showing the newest refusals instead.", key, v)
		}
		return n, ""
	}
	if before, problem = read("before"); problem != "" {
		return 0, 0, problem
	}
	if after, problem = read("after"); problem != "" {
		return 0, 0, problem
	}
	if before != 0 && after != 0 {
		return 0, 0, "The page link has both before and after; showing the newest refusals instead."
	}
	return before, after, ""
}
