package models

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkPurgeRefusals times the retention purge's own work: each
// iteration seeds two days of refusals (20,000 rows over 2,000 hosts),
// then purges the first day and a half, and reports the CPU time per
// purged row of this process (SQLite's work is in it) and, on
// PostgreSQL, of the server. The chunks' pauses are not CPU.
func BenchmarkPurgeRefusals(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, benchPurgeRefusals)
	}
}

func benchPurgeRefusals(b *testing.B) {
	s := openTestStore(b)
	ctx := context.Background()
	const rows = 20_000
	var cpu, server time.Duration
	purged := 0
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		b.StopTimer()
		batch := make([]Refusal, 0, 500)
		for i := range rows {
			batch = append(batch, Refusal{Time: base.Add(time.Duration(i) * 48 * time.Hour / rows), Tool: "proxy", Agent: fmt.Sprintf("agent-%d", i%20),
				Host: fmt.Sprintf("h%d.example", i%2000), Code: "forbidden", Reason: "internal_address", Kind: "policy", URL: fmt.Sprintf("http://h%d.example/%d", i%2000, i)})
			if len(batch) == cap(batch) {
				if err := s.InsertRefusals(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		c0, s0 := processCPU(), serverCPU(s)
		b.StartTimer()
		n, err := s.PurgeRefusalsBefore(ctx, base.Add(36*time.Hour+17*time.Minute))
		b.StopTimer()
		cpu += processCPU() - c0
		server += serverCPU(s) - s0
		if err != nil {
			b.Fatal(err)
		}
		purged += int(n)
		// The rest, so the next iteration starts from an empty log.
		if _, err := s.PurgeRefusalsBefore(ctx, base.Add(49*time.Hour)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(purged), "cpu-µs/row")
	if s.engine == enginePostgres {
		b.ReportMetric(float64(server)/float64(time.Microsecond)/float64(purged), "pg-cpu-µs/row")
	}
}
