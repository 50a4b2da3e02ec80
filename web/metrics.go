package web

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/outboundhq/outbound/guard"
)

// Metrics counts what the guard enforces, in the Prometheus format. It is
// the guard's Observer; /metrics serves it.
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
			Name: "outbound_decisions_total", Help: "Enforced outbound decisions by tool and outcome (allowed or refused).",
		}, []string{"tool", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "outbound_refusals_total", Help: "Refusals by code.",
		}, []string{"code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "outbound_fetch_seconds", Help: "Time from a guarded request to its response headers, redirects included.",
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

// ObserveDecision implements guard.Observer.
func (m *Metrics) ObserveDecision(c guard.Caller, allowed bool, code guard.Code) {
	outcome := "allowed"
	if !allowed {
		outcome = "refused"
		m.refusals.WithLabelValues(string(code)).Inc()
	}
	m.decisions.WithLabelValues(toolLabel(c), outcome).Inc()
}

// ObserveFetch implements guard.Observer.
func (m *Metrics) ObserveFetch(c guard.Caller, d time.Duration) {
	m.latency.WithLabelValues(toolLabel(c)).Observe(d.Seconds())
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
