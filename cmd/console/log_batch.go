package main

import (
	"io"
	"sync"
	"time"
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
// carries the lines of batchedLogGap; when idle a line is written at once
// (the goroutine wakes for it). Lines stay whole and in order. Close
// writes what is pending; a process killed with -9 loses the lines of at
// most the write in progress and those queued behind it (under load,
// about batchedLogGap's).
type batchedLog struct {
	w io.Writer

	mu      sync.Mutex
	pending []byte
	spare   []byte
	closed  bool
	space   *sync.Cond // signalled when pending is taken

	wake    chan struct{} // buffered(1)
	done    chan struct{}
	flushed chan struct{} // closed once Close has written what was pending
}

func newBatchedLog(w io.Writer) *batchedLog {
	b := &batchedLog{w: w, wake: make(chan struct{}, 1), done: make(chan struct{}), flushed: make(chan struct{})}
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
		<-b.flushed // after the lines queued before Close began
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

// batchedLogGap is the least time between two writes: the lines of the
// gap go in the next write together. Without it, under load, each write
// carried the few lines that arrived while the one before was in
// progress (7 lines of 283 bytes a write at 4,000 proxied requests a
// second), and each cost a wake-up of this goroutine and a write(2) of a
// file: about 1 µs of CPU a request that a bare forward proxy does not
// spend. A line that arrives when the log has been idle for the gap is
// still written at once.
const batchedLogGap = 10 * time.Millisecond

func (b *batchedLog) run() {
	defer close(b.done)
	for range b.wake {
		if b.flush() {
			time.Sleep(batchedLogGap)
		}
	}
}

// flush writes what is pending, in one write, and reports whether there
// was anything. The two buffers trade places: pending takes the spare,
// which is then none until out is written and becomes the spare, so the
// lines being written and the lines arriving meanwhile never share an
// array. An empty flush touches neither (it used to give pending the
// spare and keep it as the spare too).
func (b *batchedLog) flush() bool {
	b.mu.Lock()
	out := b.pending
	if len(out) == 0 {
		b.mu.Unlock()
		return false
	}
	b.pending, b.spare = b.spare[:0], nil
	b.space.Broadcast()
	b.mu.Unlock()
	_, _ = b.w.Write(out)
	b.mu.Lock()
	if cap(out) <= maxBatchedLog*2 {
		b.spare = out[:0]
	}
	b.mu.Unlock()
	return true
}

// Close writes every pending line and sends later writes straight to the
// underlying writer, once those lines are written.
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
	close(b.flushed)
}
