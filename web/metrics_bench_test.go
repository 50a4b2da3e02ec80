package web

import (
	"testing"

	"github.com/outboundhq/outbound/guard"
)

// BenchmarkMetricsRecord is the counter's share of every decision: the
// ingest load test records ten thousand a second through it.
func BenchmarkMetricsRecord(b *testing.B) {
	m := NewMetrics()
	rec := guard.Record{Caller: guard.Caller{Tool: "fetch_url"}, Refusal: &guard.Refusal{Code: guard.CodeForbidden}}
	b.ReportAllocs()
	for b.Loop() {
		m.Record(rec)
	}
}
