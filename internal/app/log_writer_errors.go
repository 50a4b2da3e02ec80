package app

import (
	"log/slog"
	"sync"
	"time"
)

// batchErrorEvery is how often a log writer's failing batches are said
// again after the first: a database that refuses a batch refuses its
// retry at every flush (150 ms), and one line each would flood the log.
const batchErrorEvery = 30 * time.Second

// batchErrorClock is the limiter's clock (a variable so a test can step it).
var batchErrorClock = time.Now

// batchErrorLog says why a log writer's batch failed (models'
// RefusalWriterOptions.OnError). Without it a permanent error (a schema
// the rows do not fit, a constraint) was retried for ever with no reason
// anywhere but batch_failures_total; a stall alone is said by the writer.
type batchErrorLog struct {
	log  *slog.Logger
	name string

	mu      sync.Mutex
	last    time.Time // when a line was last written; zero before the first
	skipped int       // failures since, not logged
}

func (b *batchErrorLog) report(err error) {
	now := batchErrorClock()
	b.mu.Lock()
	if !b.last.IsZero() && now.Sub(b.last) < batchErrorEvery {
		b.skipped++
		b.mu.Unlock()
		return
	}
	skipped := b.skipped
	b.last, b.skipped = now, 0
	b.mu.Unlock()
	b.log.Warn(b.name+": a batch failed; it is retried at the next flush", "err", err, "failed_since_last_line", skipped)
}
