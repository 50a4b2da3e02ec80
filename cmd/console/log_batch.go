package main

import (
	"io"
	"sync"
)

// maxBatchedLog bounds the lines waiting for the writer goroutine: past
// it, Write waits for the write in progress (back-pressure), so a stalled
// stderr cannot grow the process without bound.
const maxBatchedLog = 1 << 20

// batchedLog is the stderr of the long-running commands (serve, proxy):
// one goroutine writes it, and each write carries every line that arrived
// while the previous one was in progress. The decision log has a line per
// request; written one write(2) each, they were one of the few costs the
// guarded proxy has that a bare forward proxy has not. Under load a write
// now carries dozens of lines; when idle a line is written at once (the
// goroutine wakes for it), so nothing waits on a timer. Lines stay whole
// and in order. Close writes what is pending; a process killed with -9
// loses the lines of at most the write in progress and those queued
// behind it.
type batchedLog struct {
	w io.Writer

	mu      sync.Mutex
	pending []byte
	spare   []byte
	closed  bool
	space   *sync.Cond // signalled when pending is taken

	wake chan struct{} // buffered(1)
	done chan struct{}
}

func newBatchedLog(w io.Writer) *batchedLog {
	b := &batchedLog{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	b.space = sync.NewCond(&b.mu)
	go b.run()
	return b
}

// Write queues p; it never fails (a failed write of stderr has nowhere to
// be reported).
func (b *batchedLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	for len(b.pending) >= maxBatchedLog && !b.closed {
		b.space.Wait()
	}
	if b.closed {
		b.mu.Unlock()
		return b.w.Write(p)
	}
	b.pending = append(b.pending, p...)
	// Under the lock, so that Close cannot close wake in between.
	select {
	case b.wake <- struct{}{}:
	default: // a wake-up is pending: it takes these bytes too
	}
	b.mu.Unlock()
	return len(p), nil
}

func (b *batchedLog) run() {
	defer close(b.done)
	for range b.wake {
		b.flush()
	}
}

// flush writes what is pending, in one write.
func (b *batchedLog) flush() {
	b.mu.Lock()
	out := b.pending
	b.pending = b.spare[:0]
	b.space.Broadcast()
	b.mu.Unlock()
	if len(out) > 0 {
		_, _ = b.w.Write(out)
	}
	b.mu.Lock()
	if cap(out) <= maxBatchedLog*2 {
		b.spare = out[:0]
	}
	b.mu.Unlock()
}

// Close writes every pending line and sends later writes straight to the
// underlying writer.
func (b *batchedLog) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.space.Broadcast()
	close(b.wake)
	b.mu.Unlock()
	<-b.done
	b.flush()
}
