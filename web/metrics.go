package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/labstack/echo/v4"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
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

// Observe implements guard.Observer.
func (m *Metrics) Observe(o guard.Observation) {
	outcome := "allowed"
	if !o.Allowed {
		outcome = "refused"
		m.refusals.WithLabelValues(string(o.Code)).Inc()
	}
	m.decisions.WithLabelValues(toolLabel(o.Caller), outcome).Inc()
	if o.Allowed && o.Elapsed > 0 {
		m.latency.WithLabelValues(toolLabel(o.Caller)).Observe(o.Elapsed.Seconds())
	}
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// requireScraper lets /metrics be read with an agent's API token (how a
// Prometheus scraper authenticates: bearer_token in its config) or by a
// signed-in admin. The counts name hosts and agents, so they are not public.
func (s *Server) requireScraper(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if userOf(c).admin() {
			return next(c)
		}
		// A signed-in support user is known: asking them to sign in would
		// send them round in a circle.
		if userOf(c) != nil && !hasBearer(c) {
			return echo.NewHTTPError(http.StatusForbidden, "Only admins (or an agent token) can read /metrics.")
		}
		fields := strings.Fields(c.Request().Header.Get("Authorization"))
		if len(fields) == 2 && strings.EqualFold(fields[0], "bearer") {
			if _, err := s.d.Store.FindActiveToken(c.Request().Context(), tools.HashToken(fields[1])); err == nil {
				return next(c)
			} else if !errors.Is(err, models.ErrNotFound) {
				return err
			}
		}
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="outbound"`)
		return echo.NewHTTPError(http.StatusUnauthorized, "Reading /metrics needs an agent's API token (Authorization: Bearer …, e.g. a Prometheus bearer_token) or an admin's session.")
	}
}

func hasBearer(c echo.Context) bool {
	fields := strings.Fields(c.Request().Header.Get("Authorization"))
	return len(fields) == 2 && strings.EqualFold(fields[0], "bearer")
}
