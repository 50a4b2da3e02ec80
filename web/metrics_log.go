package web

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/outboundhq/outbound/models"
)

// logWriterCollector turns a batch writer's Stats into metrics at scrape
// time: the writer keeps plain counters (it must not depend on Prometheus,
// nor pay for it per row), and a scrape reads them once. Each log's
// collector carries its name as a constant label, so a second log (the
// decisions) registers beside the refusals without clashing.
type logWriterCollector struct {
	stats func() models.RefusalWriterStats
	descs logWriterDescs
}

type logWriterDescs struct {
	queueRows, queueBytes, written, dropped, failures, spilled, spillRows, spillBytes, stalled, stallSeconds, batchSeconds *prometheus.Desc
}

func newLogWriterDescs(log string) logWriterDescs {
	l := prometheus.Labels{"log": log}
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, l) }
	return logWriterDescs{
		queueRows:    d("outbound_log_queue_rows", "Rows acknowledged and waiting in memory (queue and batch in flight) to be written to the database."),
		queueBytes:   d("outbound_log_queue_bytes", "Estimated bytes the in-memory queue holds; past its bound rows go to the spill file."),
		written:      d("outbound_log_written_total", "Rows committed to the database."),
		dropped:      d("outbound_log_dropped_total", "Rows lost for good: the spill file was full or unwritable, or the writer was closed. Alert on any increase."),
		failures:     d("outbound_log_batch_failures_total", "Batch inserts that failed and were retried."),
		spilled:      d("outbound_log_spilled_total", "Rows appended to the local spill file while the database stalled or the queue was full."),
		spillRows:    d("outbound_log_spill_rows", "Rows in the spill file still to be written to the database."),
		spillBytes:   d("outbound_log_spill_bytes", "Bytes of the spill file still to be written to the database."),
		stalled:      d("outbound_log_stalled", "1 while the oldest unwritten batch has waited past the stall threshold (1 s)."),
		stallSeconds: d("outbound_log_stall_seconds_total", "Time spent stalled since start."),
		batchSeconds: d("outbound_log_batch_seconds", "Time of one batch insert (up to 2,000 rows in one transaction)."),
	}
}

func (c logWriterCollector) Describe(ch chan<- *prometheus.Desc) {
	d := c.descs
	for _, x := range []*prometheus.Desc{d.queueRows, d.queueBytes, d.written, d.dropped, d.failures, d.spilled, d.spillRows, d.spillBytes, d.stalled, d.stallSeconds, d.batchSeconds} {
		ch <- x
	}
}

func (c logWriterCollector) Collect(ch chan<- prometheus.Metric) {
	st, d := c.stats(), c.descs
	gauge := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v)
	}
	counter := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v)
	}
	gauge(d.queueRows, float64(st.Queued+st.InFlight))
	gauge(d.queueBytes, float64(st.QueuedBytes))
	counter(d.written, float64(st.Written))
	counter(d.dropped, float64(st.Dropped))
	counter(d.failures, float64(st.Failures))
	counter(d.spilled, float64(st.Spilled))
	gauge(d.spillRows, float64(st.SpillRows))
	gauge(d.spillBytes, float64(st.SpillBytes))
	stalled := 0.0
	if st.Stalled {
		stalled = 1
	}
	gauge(d.stalled, stalled)
	counter(d.stallSeconds, st.StallTotal.Seconds())
	buckets := make(map[float64]uint64, len(models.BatchLatencyBuckets))
	for i, le := range models.BatchLatencyBuckets {
		if i < len(st.BatchBuckets) {
			buckets[le] = st.BatchBuckets[i]
		}
	}
	ch <- prometheus.MustNewConstHistogram(d.batchSeconds, st.Batches, st.BatchSeconds, buckets)
}

// WatchLogWriter exports a batch writer's state with the label log=name
// ("refusals"; a decision log would be another name).
func (m *Metrics) WatchLogWriter(name string, stats func() models.RefusalWriterStats) {
	m.reg.MustRegister(logWriterCollector{stats: stats, descs: newLogWriterDescs(name)})
}
