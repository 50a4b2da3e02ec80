package models

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkWriteWhileBehind is Write's cost to the request that logs,
// with the writer behind by behind rows (5 s at 10,000 a second is
// 50,000) and taking a full batch for every refusalRowsPerTxLimit rows
// written, so the queue stays as long as it was: the state a database
// that is slower than the rows arriving leaves the writer in, when CPU is
// scarcest. (The writer's goroutine is idle here: the benchmark takes the
// batches itself, so only Write and the queue are timed.)
func BenchmarkWriteWhileBehind(b *testing.B) {
	for _, behind := range []int{0, 50_000} {
		b.Run(fmt.Sprintf("behind-%d", behind), func(b *testing.B) {
			w := newBatchWriter(func(context.Context, []Refusal) error { return nil },
				RefusalWriterOptions{FlushInterval: time.Hour, FlushBatch: 1 << 30, QueueCap: 1 << 30, QueueBytes: 1 << 40, StallAfter: time.Hour})
			defer w.Close(context.Background())
			row := Refusal{Time: time.Now(), Tool: "fetch_url", URL: "http://10.0.19.136/page/4913", Host: "10.0.19.136", Port: 80,
				Addresses: StringList{"10.0.19.136"}, Code: "forbidden", Reason: "internal_address", Kind: "policy",
				Message: "10.0.19.136 is in the private-use range 10.0.0.0/8, which is refused.", Fix: "This host is internal; ask an admin only if the task really needs it.",
				Agent: "load-agent", Trigger: "api"}
			for range behind {
				w.Write(row)
			}
			taken := 0
			b.ReportAllocs()
			for b.Loop() {
				w.Write(row)
				if taken++; taken == refusalRowsPerTxLimit {
					taken = 0
					rows, _, _, err := w.nextBatch()
					if err != nil || len(rows) == 0 {
						b.Fatalf("nextBatch: %d rows, %v", len(rows), err)
					}
					w.mu.Lock()
					w.inflight, w.inflightRows = 0, nil
					w.mu.Unlock()
				}
			}
		})
	}
}
