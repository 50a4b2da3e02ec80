package views

import (
	"strconv"
)

// OverviewView is the Overview page: refusals over time by class, the most
// refused hosts, agents and tools, and the attack-like reasons.
type OverviewView struct {
	// Hours is the last 24 hours by hour, Days the last 30 days by day.
	Hours, Days Chart
	// Totals are the last 24 hours' refusals by class.
	Attack, Policy, Network int64
	// NetworkHref lists the last 24 hours' network failures.
	NetworkHref string
	// Window says what the top lists cover, e.g. "the last 24 hours".
	Window                  string
	TopHosts, TopAgents     []CountLink
	TopTools, AttackReasons []CountLink
	PolicyReasons           []CountLink
	// Spikes name the hours whose attack-like refusals spiked, in words.
	Spikes []string
	// SpikeRule says what counts as a spike.
	SpikeRule string
	LogHref   string
}

// CountLink is one row of a top list: a name, its count, and the log
// filtered to it.
type CountLink struct {
	Name  string
	Count int64
	Href  string
}

// Chart is one stacked bar chart, as data: the view draws it as SVG and
// as a table from the same bars.
type Chart struct {
	ID      string // the SVG's id prefix, e.g. "hours"
	Title   string
	Caption string
	// Max is the value the plot's top stands for.
	Max  int64
	Bars []Bar
}

// Bar is one bucket: its counts by class and the log filtered to it.
type Bar struct {
	Label string // "13:00" or "Mar 4", under the bar
	Long  string // "2026-03-04 13:00–14:00 UTC", in the title and the table
	Href  string
	// ShowLabel says whether the label is drawn under this bar (every
	// third hour, every fifth day) so the labels never overlap.
	ShowLabel               bool
	Attack, Policy, Network int64
	Spike                   bool
}

// Total is the bar's refusals.
func (b Bar) Total() int64 { return b.Attack + b.Policy + b.Network }

// The plot's geometry, in SVG user units: the chart scales to its box.
const (
	chartW      = 720
	chartH      = 210
	plotLeft    = 44
	plotRight   = 8
	plotTop     = 18
	plotBottom  = 26
	plotW       = chartW - plotLeft - plotRight
	plotH       = chartH - plotTop - plotBottom
	barFraction = 0.72
)

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func (c Chart) viewBox() string {
	return "0 0 " + strconv.Itoa(chartW) + " " + strconv.Itoa(chartH)
}

func (c Chart) slot() float64 { return float64(plotW) / float64(max(len(c.Bars), 1)) }

// barX is the left edge of bar i.
func (c Chart) barX(i int) float64 {
	return plotLeft + float64(i)*c.slot() + c.slot()*(1-barFraction)/2
}

func (c Chart) barW() float64 { return c.slot() * barFraction }

// height is the plot height of n refusals.
func (c Chart) height(n int64) float64 {
	if c.Max <= 0 {
		return 0
	}
	return float64(n) * plotH / float64(c.Max)
}

// segment is one class's rectangle in bar i: from the bottom, network
// failures, then policy, then attack-like on top.
type segment struct {
	Class      string
	X, Y, W, H string
	Visible    bool
}

func (c Chart) segments(i int) []segment {
	b := c.Bars[i]
	base := float64(plotTop + plotH)
	var out []segment
	for _, s := range []struct {
		class string
		n     int64
	}{{"seg-network", b.Network}, {"seg-policy", b.Policy}, {"seg-attack", b.Attack}} {
		h := c.height(s.n)
		if s.n > 0 && h < 1 {
			h = 1 // a single refusal still shows
		}
		base -= h
		out = append(out, segment{Class: s.class, X: num(c.barX(i)), Y: num(base), W: num(c.barW()), H: num(h), Visible: s.n > 0})
	}
	return out
}

// barTop is the y of bar i's top, where a spike marker sits.
func (c Chart) barTop(i int) float64 {
	b := c.Bars[i]
	h := c.height(b.Total())
	return float64(plotTop+plotH) - h
}

// hitBox covers the whole column of bar i, so a thin bar is easy to hit.
func (c Chart) hitX(i int) string { return num(plotLeft + float64(i)*c.slot()) }
func (c Chart) hitW() string      { return num(c.slot()) }

func (c Chart) labelX(i int) string { return num(c.barX(i) + c.barW()/2) }

func (c Chart) markerPoints(i int) string {
	x := c.barX(i) + c.barW()/2
	y := c.barTop(i) - 4
	return num(x-5) + "," + num(y-8) + " " + num(x+5) + "," + num(y-8) + " " + num(x) + "," + num(y)
}

// gridY is the y of the line for value v.
func (c Chart) gridY(v int64) string { return num(float64(plotTop+plotH) - c.height(v)) }

// gridValues are the values the grid lines mark: zero, half and the top.
func (c Chart) gridValues() []int64 {
	if c.Max <= 0 {
		return []int64{0}
	}
	if c.Max < 2 {
		return []int64{0, c.Max}
	}
	return []int64{0, c.Max / 2, c.Max}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// barTitle is what a bar says to a screen reader and on hover.
func barTitle(b Bar) string {
	s := b.Long + ": " + itoa64(b.Total()) + " refused — " + itoa64(b.Attack) + " attack-like, " +
		itoa64(b.Policy) + " policy, " + itoa64(b.Network) + " network failures"
	if b.Spike {
		s += " (attack-like spike)"
	}
	return s + ". Opens the refusal log for this time."
}

var (
	plotLeftS   = strconv.Itoa(plotLeft)
	plotRightS  = strconv.Itoa(chartW - plotRight)
	axisLabelX  = strconv.Itoa(plotLeft - 6)
	labelY      = strconv.Itoa(chartH - 8)
	plotBottomS = strconv.Itoa(plotTop + plotH)
)
