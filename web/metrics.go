package web

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/outboundhq/outbound/guard"
)

// Metrics counts what the guard and the tools enforce, in the Prometheus
// format: one increment per decision record (per tool call and per
// proxied request). It is a guard.Recorder the application layer's sink
// hands every record to; /metrics serves it.
type Metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
}

// NewMetrics registers the product's metrics and Go's runtime metrics.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "outbound_decisions_total", Help: "Enforced outbound decisions (tool calls and proxied requests) by tool, outcome (allowed or refused) and, for a refusal, kind (policy or network; empty when allowed).",
		}, []string{"tool", "outcome", "kind"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "outbound_refusals_total", Help: "Refusals by code.",
		}, []string{"code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "outbound_fetch_seconds", Help: "Time of an allowed, uncached decision: a tool call to its answer, a proxied request to its response headers or connected tunnel.",
			Buckets: []float64{.025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
	}
	m.reg.MustRegister(m.decisions, m.refusals, m.latency, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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
	outcome, kind := "allowed", ""
	if r := rec.Refusal; r != nil {
		outcome, kind = "refused", string(r.KindOf())
		m.refusals.WithLabelValues(string(r.Code)).Inc()
	}
	m.decisions.WithLabelValues(toolLabel(rec.Caller), outcome, kind).Inc()
	if rec.Allowed() && !rec.Cached && rec.Elapsed > 0 {
		m.latency.WithLabelValues(toolLabel(rec.Caller)).Observe(rec.Elapsed.Seconds())
	}
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
