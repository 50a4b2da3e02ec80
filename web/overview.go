package web

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/views"
)

// The Overview is the picture of the traffic support staff land on:
// refusals over the last 24 hours and 30 days, stacked by class, with the
// attack-like ones (guard.TargetReasons) apart from the policy's ordinary
// refusals and from network failures (the stored kind), a marker where
// attack-like refusals spike, and the most refused hosts, agents and
// tools. It is drawn on the server as SVG, and every bar and row links to
// the refusal log filtered to exactly what it counts.

// The Overview's shape.
const (
	overviewHours = 24
	overviewDays  = 30
	overviewTop   = 8
	// overviewCacheTTL is how long a closed hour's or day's count is
	// reused; models.OverviewCache says why that is safe.
	overviewCacheTTL = 5 * time.Minute
)

// attackReasons are the guard's target reasons as the store's query takes
// them.
var attackReasons = func() []string {
	out := make([]string, len(guard.TargetReasons))
	for i, r := range guard.TargetReasons {
		out[i] = string(r)
	}
	return out
}()

func (s *Server) overviewPage(c echo.Context) error {
	now := s.d.Now().UTC()
	// The top lists cover yesterday and today (UTC): whole days, which the
	// store's counters answer without counting rows (a rolling 24 hours
	// would count up to half a day of rows, hundreds of thousands during
	// a flood), and on a minute, so a row's count and its link's log
	// agree exactly.
	since := time.Date(now.Year(), now.Month(), now.Day()-1, 0, 0, 0, 0, time.UTC)
	o, err := s.d.Store.RefusalOverview(c.Request().Context(), models.OverviewQuery{
		Now: now, Hours: overviewHours, Days: overviewDays, Top: overviewTop, TopSince: since,
		AttackReasons: attackReasons, Cache: s.overview,
	})
	if err != nil {
		return err
	}
	vm := overviewView(o, since)
	return render(c, http.StatusOK, views.OverviewPage(s.shell(c, "Overview", "overview"), vm))
}

// hoursFrom is the start of the first hourly bucket as the log's from
// filter, or fallback when there are none.
func hoursFrom(hours []models.OverviewBucket, fallback string) string {
	if len(hours) == 0 {
		return fallback
	}
	return hours[0].Start.UTC().Format("2006-01-02T15:04")
}

// overviewView turns the store's counts into the page's view model.
func overviewView(o models.RefusalOverview, since time.Time) views.OverviewView {
	from := since.Format("2006-01-02T15:04")
	vm := views.OverviewView{
		Hours: views.Chart{ID: "hours", Title: "Last 24 hours, by hour",
			Caption: "Refusals per hour over the last 24 hours, stacked: attack-like, policy and network failures. Each bar opens the log for its hour."},
		Days: views.Chart{ID: "days", Title: "Last 30 days, by day",
			Caption: "Refusals per day over the last 30 days, stacked: attack-like, policy and network failures. Each bar opens the log for its day."},
		Window: "since " + since.Format("Mon 2006-01-02") + " 00:00 UTC (yesterday and today)",
		// The network failures counted are the hourly bars' (the last 24
		// hours), so their link starts where the first bar does, not where
		// the top lists do.
		NetworkHref: logHref("kind", string(guard.KindNetwork), "from", hoursFrom(o.Hours, from)),
		LogHref:     "/refusals",
		SpikeRule:   fmt.Sprintf("A spike is an hour with at least %d attack-like refusals and more than %d times the 24 hours' median.", spikeMinHour, spikeFactor),
	}
	hourSpikes := spikes(o.Hours, spikeMinHour)
	for i, b := range o.Hours {
		bar := bucketBar(b, b.Start.Format("15:04"), b.Start.Format("2006-01-02 15:04")+"–"+b.End.Format("15:04")+" UTC", i%3 == 0 || i == len(o.Hours)-1)
		bar.Spike = hourSpikes[i]
		if bar.Spike {
			vm.Spikes = append(vm.Spikes, fmt.Sprintf("%s: %d attack-like refusals.", bar.Long, b.Attack))
		}
		vm.Hours.Bars = append(vm.Hours.Bars, bar)
		vm.Attack, vm.Policy, vm.Network = vm.Attack+b.Attack, vm.Policy+b.Policy, vm.Network+b.Network
	}
	daySpikes := spikes(o.Days, spikeMinDay)
	for i, b := range o.Days {
		bar := bucketBar(b, b.Start.Format("Jan 2"), b.Start.Format("Mon 2006-01-02")+" UTC", i%5 == 0 || i == len(o.Days)-1)
		bar.Spike = daySpikes[i]
		vm.Days.Bars = append(vm.Days.Bars, bar)
	}
	vm.Hours.Max, vm.Days.Max = chartMax(vm.Hours.Bars), chartMax(vm.Days.Bars)
	for _, h := range o.TopHosts {
		vm.TopHosts = append(vm.TopHosts, views.CountLink{Name: h.Name, Count: h.Count, Href: logHref("host", `"`+h.Name+`"`, "from", from)})
	}
	for _, a := range o.TopAgents {
		vm.TopAgents = append(vm.TopAgents, views.CountLink{Name: a.Name, Count: a.Count, Href: logHref("agent", a.Name, "from", from)})
	}
	for _, t := range o.TopTools {
		vm.TopTools = append(vm.TopTools, views.CountLink{Name: t.Name, Count: t.Count, Href: logHref("tool", t.Name, "from", from)})
	}
	for _, r := range o.Reasons {
		if r.Reason == "" {
			continue // no reason to filter on; the kind's total is above
		}
		row := views.CountLink{Name: r.Reason, Count: r.Count, Href: logHref("reason", r.Reason, "kind", r.Kind, "from", from)}
		switch {
		case r.Kind == string(guard.KindNetwork):
		case guard.TargetsReason(guard.Reason(r.Reason)):
			vm.AttackReasons = append(vm.AttackReasons, row)
		case len(vm.PolicyReasons) < overviewTop:
			vm.PolicyReasons = append(vm.PolicyReasons, row)
		}
	}
	return vm
}

// bucketBar is one bar, linking to the log for exactly its time: from
// its first minute to its last, which the log's To includes.
func bucketBar(b models.OverviewBucket, label, long string, show bool) views.Bar {
	return views.Bar{
		Label: label, Long: long, ShowLabel: show,
		Href:   logHref("from", b.Start.Format("2006-01-02T15:04"), "to", b.End.Add(-time.Minute).Format("2006-01-02T15:04")),
		Attack: b.Attack, Policy: b.Policy, Network: b.Network,
	}
}

// chartMax is the value the plot's top stands for: the tallest bar,
// rounded up to a number the grid can halve evenly.
func chartMax(bars []views.Bar) int64 {
	var m int64
	for _, b := range bars {
		m = max(m, b.Total())
	}
	if m <= 2 {
		return m
	}
	return m + m%2
}

// logHref links to the refusal log filtered by the given key and value
// pairs; a pair with an empty value is left out, so no link carries an
// empty parameter.
func logHref(pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	if len(v) == 0 {
		return "/refusals"
	}
	return "/refusals?" + v.Encode()
}
