package web

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

// Finding 1: /metrics had no writer metric at all.
func TestMetricsExportTheLogWriter(t *testing.T) {
	m := NewMetrics()
	st := models.RefusalWriterStats{Queued: 7, InFlight: 3, QueuedBytes: 4096, Written: 100, Dropped: 2, Failures: 1, Spilled: 50,
		SpillRows: 40, SpillBytes: 9000, Stalled: true, StallTotal: 12 * time.Second, Batches: 4, BatchSeconds: 0.5,
		BatchBuckets: []uint64{1, 1, 2, 2, 3, 3, 3, 4, 4, 4, 4}}
	m.WatchLogWriter("refusals", func() models.RefusalWriterStats { return st })
	m.WatchLogWriter("decisions", func() models.RefusalWriterStats { return models.RefusalWriterStats{} })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`outbound_log_queue_rows{log="refusals"} 10`,
		`outbound_log_queue_bytes{log="refusals"} 4096`,
		`outbound_log_written_total{log="refusals"} 100`,
		`outbound_log_dropped_total{log="refusals"} 2`,
		`outbound_log_batch_failures_total{log="refusals"} 1`,
		`outbound_log_spilled_total{log="refusals"} 50`,
		`outbound_log_spill_rows{log="refusals"} 40`,
		`outbound_log_spill_bytes{log="refusals"} 9000`,
		`outbound_log_stalled{log="refusals"} 1`,
		`outbound_log_stall_seconds_total{log="refusals"} 12`,
		`outbound_log_batch_seconds_bucket{log="refusals",le="0.025"} 2`,
		`outbound_log_batch_seconds_count{log="refusals"} 4`,
		`outbound_log_dropped_total{log="decisions"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
