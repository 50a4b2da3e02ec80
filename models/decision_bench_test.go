package models

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkInsertDecisions is the decisions store's cost per allowed
// request that names a ticket: one row, written in the batches the writer makes (500 at a
// time under load). Compare with a proxied request's own cost
// (cmd/console BenchmarkStandaloneProxy, cpu-µs/op).
func BenchmarkInsertDecisions(b *testing.B) {
	s := openTestStore(b)
	ctx := context.Background()
	batch := make([]Decision, 500)
	for i := range batch {
		batch[i] = Decision{Tool: "proxy", Agent: "helpdesk-bot", Host: "status.example.com", Port: 443,
			URL: fmt.Sprintf("https://status.example.com/incidents/%d?from=agent", i), Proxied: true, ElapsedMS: 12,
			Ticket: fmt.Sprintf("SUP-%d", i%50)} // only decisions that name a ticket are stored
	}
	b.ReportAllocs()
	cpu := processCPU()
	rows := 0
	for b.Loop() {
		now := time.Now()
		for i := range batch {
			batch[i].Time = now
		}
		if err := s.InsertDecisions(ctx, batch); err != nil {
			b.Fatal(err)
		}
		rows += len(batch)
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(rows), "cpu-µs/row")
}
