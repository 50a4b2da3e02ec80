package web

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/outboundhq/outbound/guard"
)

// Metrics counts what the guard and the tools enforce, in the Prometheus
// format: one increment of one counter per decision record (per tool call
// and per proxied request). It is a guard.Recorder the application layer's
// sink hands every record to; /metrics serves it.
type Metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	latency   *prometheus.HistogramVec
}

// The labels of outbound_decisions_total. A refusal's code and kind are
// labels of the one counter, not a second counter, so a decision is
// counted once and a sum over any label is the number of decisions.
const (
	labelTool    = "tool"
	labelOutcome = "outcome" // allowed or refused
	labelKind    = "kind"    // policy or network; empty when allowed
	labelCode    = "code"    // the refusal's code; empty when allowed
	labelVia     = "via"     // call or proxy
)

// The values of labelVia: a tool call, or a request through the proxy (a
// screenshot's page loads are proxied requests of take_screenshot).
const (
	viaCall  = "call"
	viaProxy = "proxy"
)

// NewMetrics registers the product's metrics and Go's runtime metrics.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "outbound_decisions_total",
			Help: "Enforced outbound decisions, one per tool call (via=call) and per proxied request (via=proxy), by tool, outcome (allowed or refused) and, for a refusal, kind (policy or network) and code (empty when allowed).",
		}, []string{labelTool, labelOutcome, labelKind, labelCode, labelVia}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "outbound_fetch_seconds", Help: "Time of an allowed, uncached decision: a tool call to its answer, a proxied request to its response headers or connected tunnel.",
			Buckets: []float64{.025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
	}
	m.reg.MustRegister(m.decisions, m.latency, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func toolLabel(c guard.Caller) string {
	if c.Tool == "" {
		return "other"
	}
	return c.Tool
}

// Record implements guard.Recorder: one decision, one increment.
func (m *Metrics) Record(rec guard.Record) {
	outcome, kind, code, via := "allowed", "", "", viaCall
	if r := rec.Refusal; r != nil {
		outcome, kind, code = "refused", string(r.KindOf()), string(r.Code)
	}
	if rec.Proxied {
		via = viaProxy
	}
	// In the order NewMetrics declares the labels: a prometheus.Labels
	// map would be built and hashed for every decision.
	m.decisions.WithLabelValues(toolLabel(rec.Caller), outcome, kind, code, via).Inc()
	if rec.Allowed() && !rec.Cached && rec.Elapsed > 0 {
		m.latency.WithLabelValues(toolLabel(rec.Caller)).Observe(rec.Elapsed.Seconds())
	}
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
