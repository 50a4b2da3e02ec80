package models

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/pgtest"
)

// BenchmarkInsertDecisions is the decisions store's cost per allowed
// request that names a ticket: one row, written in the batches the writer makes (500 at a
// time under load). Compare with a proxied request's own cost
// (cmd/console BenchmarkStandaloneProxy, cpu-µs/op).
func BenchmarkInsertDecisions(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, benchInsertDecisions)
	}
}

func benchInsertDecisions(b *testing.B) {
	s := openTestStore(b)
	ctx := context.Background()
	batch := make([]Decision, 500)
	for i := range batch {
		batch[i] = Decision{Tool: "proxy", Agent: "helpdesk-bot", Host: "status.example.com", Port: 443,
			URL: fmt.Sprintf("https://status.example.com/incidents/%d?from=agent", i), Proxied: true, ElapsedMS: 12,
			Ticket: fmt.Sprintf("SUP-%d", i%50)} // only decisions that name a ticket are stored
	}
	b.ReportAllocs()
	cpu, server := processCPU(), serverCPU(s)
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
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(rows), "cpu-µs/row")
	reportServerCPU(b, s, server, rows)
}

// BenchmarkInsertRefusals is the refusal log's cost per row, in batches
// of 500 (what the writer takes under load), each row a distinct URL and
// one of 5,000 hosts: the row, its search text, the host list and the
// counters. On PostgreSQL (OUTBOUND_TEST_POSTGRES) most of the work is
// the server's, which cpu-µs/row (this process) does not count:
// pg-cpu-µs/row is the server's share (a cluster on a local socket).
func BenchmarkInsertRefusals(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, benchInsertRefusals)
	}
}

func benchInsertRefusals(b *testing.B) {
	s := openTestStore(b)
	ctx := context.Background()
	batch := make([]Refusal, 500)
	b.ReportAllocs()
	cpu, server := processCPU(), serverCPU(s)
	rows := 0
	for b.Loop() {
		now := time.Now()
		for i := range batch {
			n := rows + i
			batch[i] = Refusal{Time: now, Tool: "proxy", Agent: fmt.Sprintf("agent-%d", n%20), Host: fmt.Sprintf("10.0.%d.%d", n%5000/256, n%256), Port: 80,
				URL: fmt.Sprintf("http://10.0.%d.%d/page/%d", n%5000/256, n%256, n), Code: "forbidden", Reason: "internal_address", Kind: "policy",
				Message: "10.0.0.1 is in the private-use range 10.0.0.0/8, which is refused.", Fix: "This host is internal; ask an admin only if the task really needs it."}
		}
		if err := s.InsertRefusals(ctx, batch); err != nil {
			b.Fatal(err)
		}
		rows += len(batch)
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(rows), "cpu-µs/row")
	reportServerCPU(b, s, server, rows)
}

// serverCPU is the CPU time s's PostgreSQL server has used (0 on SQLite,
// or for a server this machine cannot see).
func serverCPU(s *Store) time.Duration {
	if s.engine != enginePostgres {
		return 0
	}
	d, _ := pgtest.ServerCPU(s.dsn)
	return d
}

// reportServerCPU reports the PostgreSQL server's CPU time per row since
// since (a serverCPU reading), as pg-cpu-µs/row.
func reportServerCPU(b *testing.B, s *Store, since time.Duration, rows int) {
	if s.engine == enginePostgres && rows > 0 {
		b.ReportMetric(float64(serverCPU(s)-since)/float64(time.Microsecond)/float64(rows), "pg-cpu-µs/row")
	}
}
