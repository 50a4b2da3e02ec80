package web

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/outboundhq/outbound/internal/app"
)

// ReloadLagObserver registers outbound_config_reload_lag_seconds and
// returns what app.Options.ReloadLag takes: each change another process
// made is observed once, from its commit to the end of this process's
// reload. Call it once per Metrics.
func (m *Metrics) ReloadLagObserver() func(time.Duration) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "outbound_config_reload_lag_seconds",
		Help:    "How late a configuration change made by another process came into force in this one: from its commit (the writer's clock) to the end of the reload here.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})
	m.reg.MustRegister(h)
	return func(d time.Duration) { h.Observe(d.Seconds()) }
}

// TrackReloads registers the gauges of this process's reload state.
func (m *Metrics) TrackReloads(status func() app.ReloadStatus) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "outbound_config_revision",
			Help: "The configuration revision in force in this process.",
		}, func() float64 { return float64(status().Revision) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "outbound_config_listening",
			Help: "1 while this replica holds its PostgreSQL LISTEN connection; 0 while changes reach it by polling alone (always 0 on SQLite).",
		}, func() float64 {
			if status().Listening {
				return 1
			}
			return 0
		}),
	)
}
