package models

import (
	"sync/atomic"
	"time"
)

// RefusalWriterStats is a snapshot of a BatchWriter's state, for metrics,
// /healthz and the refusal log's banner.
type RefusalWriterStats struct {
	Queued      int    // rows waiting in memory
	QueuedBytes int64  // their estimated size
	InFlight    int    // rows of the batch being written now, unless the spill file holds them too
	Written     uint64 // rows committed to the database
	// Dropped counts rows lost for good: the writer was closed, or the
	// spill file could not take them (no spill file, full, or unwritable).
	Dropped  uint64
	LastDrop time.Time // when a row was last dropped; zero if never
	Failures uint64    // batches that failed and were retried
	// Merged counts refusals that became part of an aggregated row
	// (RefusalAggregator) rather than rows of their own.
	Merged uint64
	// Spilled counts rows ever appended to the spill file; SpillRows and
	// SpillBytes are what it still holds, to be written once the database
	// answers again.
	Spilled    uint64
	SpillRows  int64
	SpillBytes int64
	SpillPath  string
	// Stalled is set while the oldest unwritten batch has waited longer
	// than the stall threshold; StalledFor is how long so far, and
	// StallTotal the time spent stalled since start, this stall included.
	Stalled    bool
	StalledFor time.Duration
	StallTotal time.Duration
	// Batch latency: the count and total seconds of batch inserts, and the
	// cumulative count at or below each BatchLatencyBuckets bound.
	Batches      uint64
	BatchSeconds float64
	BatchBuckets []uint64
}

// NamedWriterStats is one log writer's state under its name: Log is the
// metrics' log label and /healthz's key ("refusals", "decisions",
// "would_refuse"), Rows says what its rows are in a sentence ("refusals",
// "allowed decisions").
type NamedWriterStats struct {
	Log  string
	Rows string
	RefusalWriterStats
}

// NotWritten is every acknowledged row not (yet) in the database: queued,
// in flight, spilled and dropped.
func (s RefusalWriterStats) NotWritten() uint64 {
	return uint64(s.Queued+s.InFlight) + uint64(s.SpillRows) + s.Dropped
}

// BatchLatencyBuckets are the upper bounds, in seconds, of the batch
// latency histogram.
var BatchLatencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// latencyHistogram counts batch durations without a lock.
type latencyHistogram struct {
	buckets [12]atomic.Uint64 // len(BatchLatencyBuckets) + the +Inf bucket
	count   atomic.Uint64
	nanos   atomic.Int64
}

func (h *latencyHistogram) observe(d time.Duration) {
	sec := d.Seconds()
	i := 0
	for i < len(BatchLatencyBuckets) && sec > BatchLatencyBuckets[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.count.Add(1)
	h.nanos.Add(int64(d))
}

// cumulative returns the count at or below each bound, as Prometheus wants.
func (h *latencyHistogram) cumulative() []uint64 {
	out := make([]uint64, len(BatchLatencyBuckets))
	var sum uint64
	for i := range out {
		sum += h.buckets[i].Load()
		out[i] = sum
	}
	return out
}
