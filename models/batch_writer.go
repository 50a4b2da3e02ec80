package models

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for RefusalWriterOptions.
const (
	DefaultFlushInterval  = 150 * time.Millisecond
	DefaultFlushBatch     = 500
	DefaultRefusalQueue   = 100_000
	refusalRowsPerTxLimit = 2000 // one transaction holds the write lock for at most this many rows
)

// RefusalWriterOptions tunes a RefusalWriter. Zero values mean the defaults.
type RefusalWriterOptions struct {
	// FlushInterval is how often queued rows are written.
	FlushInterval time.Duration
	// FlushBatch wakes the writer early once this many rows are queued.
	FlushBatch int
	// QueueCap bounds memory: a Write finding this many rows queued is
	// dropped and counted instead of waiting.
	QueueCap int
	// OnError, if set, is called from the writer goroutine when a batch
	// fails. The failed rows go back to the front of the queue and are
	// retried on the next flush.
	OnError func(error)
}

// RefusalWriterStats is a snapshot of a RefusalWriter's counters, for metrics.
type RefusalWriterStats struct {
	Queued   int    // rows waiting in memory
	Written  uint64 // rows committed to the database
	Dropped  uint64 // rows lost because the queue was full or the writer closed
	Failures uint64 // batches that failed and were requeued
}

// refusalSink is where a RefusalWriter puts its batches. *Store is the real
// one; tests substitute a sink that stalls to play a slow disk.
type refusalSink interface {
	InsertRefusals(ctx context.Context, rows []Refusal) error
}

// RefusalWriter is the BatchWriter of the refusal log.
type RefusalWriter = BatchWriter[Refusal]

// stamped is a row that records when it happened; the writer stamps a zero
// time with the time of Write, not of the flush.
type stamped interface{ stampNow(time.Time) }

func (r *Refusal) stampNow(now time.Time) {
	if r.Time.IsZero() {
		r.Time = now
	}
}

// BatchWriter records rows (refusals, decisions) without ever making the refused request
// wait for the disk: Write appends to an in-memory queue and a background
// goroutine commits the queue in batches. Logging a refusal must not be the
// thing that slows the guard down when the disk is busy (a purge, a backup,
// a slow volume).
type BatchWriter[T any] struct {
	insert func(ctx context.Context, rows []T) error
	opts   RefusalWriterOptions

	mu     sync.Mutex
	queue  []T
	closed bool

	written  atomic.Uint64
	dropped  atomic.Uint64
	failures atomic.Uint64

	wake   chan struct{} // buffered(1): "a batch is ready", coalesced
	stop   chan struct{} // closed by Close
	done   chan struct{} // closed when the background goroutine exits
	ctx    context.Context
	cancel context.CancelFunc
}

// NewRefusalWriter starts a writer that batches refusals into store. Call
// Close on shutdown to flush what is still queued.
func NewRefusalWriter(store *Store, opts RefusalWriterOptions) *RefusalWriter {
	return newRefusalWriter(store, opts)
}

func newRefusalWriter(sink refusalSink, opts RefusalWriterOptions) *RefusalWriter {
	return newBatchWriter(sink.InsertRefusals, opts)
}

// newBatchWriter starts a writer that commits rows of one kind through
// insert, in batches, from a background goroutine.
func newBatchWriter[T any](insert func(context.Context, []T) error, opts RefusalWriterOptions) *BatchWriter[T] {
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = DefaultFlushInterval
	}
	if opts.FlushBatch <= 0 {
		opts.FlushBatch = DefaultFlushBatch
	}
	if opts.QueueCap <= 0 {
		opts.QueueCap = DefaultRefusalQueue
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &BatchWriter[T]{
		insert: insert,
		opts:   opts,
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
	}
	go w.run()
	return w
}

// Write queues r and returns at once; it never touches the disk. A zero
// Time is stamped now, so the row records when the refusal happened rather
// than when it was flushed. It returns false, and counts a drop, if the
// queue is full or the writer is closed.
func (w *BatchWriter[T]) Write(r T) bool {
	if st, ok := any(&r).(stamped); ok {
		st.stampNow(time.Now().UTC())
	}
	w.mu.Lock()
	if w.closed || len(w.queue) >= w.opts.QueueCap {
		w.mu.Unlock()
		w.dropped.Add(1)
		return false
	}
	w.queue = append(w.queue, r)
	ready := len(w.queue) >= w.opts.FlushBatch
	w.mu.Unlock()
	if ready {
		select {
		case w.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	return true
}

// Dropped returns how many refusals were not recorded because the queue was
// full or the writer was closed.
func (w *BatchWriter[T]) Dropped() uint64 { return w.dropped.Load() }

// Stats returns the writer's counters.
func (w *BatchWriter[T]) Stats() RefusalWriterStats {
	w.mu.Lock()
	queued := len(w.queue)
	w.mu.Unlock()
	return RefusalWriterStats{
		Queued:   queued,
		Written:  w.written.Load(),
		Dropped:  w.dropped.Load(),
		Failures: w.failures.Load(),
	}
}

// Close stops accepting rows, waits for any batch in flight, and writes
// everything still queued. If ctx ends first it gives up and reports how
// many rows were not written. Close is not safe to call twice.
func (w *BatchWriter[T]) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	select {
	case <-w.done:
	case <-ctx.Done():
		w.cancel()
		return fmt.Errorf("models: batch writer closed with %d rows not written: %w", w.Stats().Queued, ctx.Err())
	}
	defer w.cancel()
	for {
		err := w.flush(ctx)
		queued := w.Stats().Queued
		if err == nil && queued == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("models: batch writer closed with %d rows not written: %w", queued, ctx.Err())
		}
		if err != nil {
			return fmt.Errorf("models: batch writer closed with %d rows not written: %w", queued, err)
		}
	}
}

func (w *BatchWriter[T]) run() {
	defer close(w.done)
	t := time.NewTicker(w.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		case <-w.wake:
		}
		if err := w.flush(w.ctx); err != nil && w.opts.OnError != nil {
			w.opts.OnError(err)
		}
	}
}

// flush writes everything queued at the time of the call, in transactions
// of at most refusalRowsPerTxLimit rows. On failure the unwritten rows go
// back to the front of the queue, keeping their order.
func (w *BatchWriter[T]) flush(ctx context.Context) error {
	w.mu.Lock()
	pending := w.queue
	w.queue = nil
	w.mu.Unlock()
	for len(pending) > 0 {
		n := min(len(pending), refusalRowsPerTxLimit)
		if err := w.insert(ctx, pending[:n]); err != nil {
			w.failures.Add(1)
			w.requeue(pending)
			return err
		}
		w.written.Add(uint64(n))
		pending = pending[n:]
	}
	return nil
}

// requeue puts rows back ahead of anything queued meanwhile, dropping (and
// counting) whatever no longer fits under the cap.
func (w *BatchWriter[T]) requeue(rows []T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	merged := make([]T, 0, len(rows)+len(w.queue))
	merged = append(merged, rows...)
	merged = append(merged, w.queue...)
	if over := len(merged) - w.opts.QueueCap; over > 0 {
		w.dropped.Add(uint64(over))
		merged = merged[:w.opts.QueueCap]
	}
	w.queue = merged
}
