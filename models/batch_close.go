package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// WriterCloseError is Close's account of the rows a BatchWriter
// acknowledged but did not write to the database: the queue, the batch in
// flight and the spill file (all kept in the spill file for the next
// start, when there is one) and every row dropped since start.
type WriterCloseError struct {
	Name       string
	NotWritten uint64 // Spilled + Lost
	Spilled    int64  // kept in SpillPath, written at the next start
	SpillPath  string
	Lost       uint64 // dropped since start, or left in memory with no spill file to take them
	Err        error  // why writing stopped (the context, the database), if it did
}

func (e *WriterCloseError) Error() string {
	msg := fmt.Sprintf("models: %s closed with %d rows not written to the database", e.Name, e.NotWritten)
	if e.SpillPath != "" {
		msg += fmt.Sprintf(": %d kept in %s (written at the next start), %d lost", e.Spilled, e.SpillPath, e.Lost)
	} else {
		msg += fmt.Sprintf(": %d lost (no spill file)", e.Lost)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *WriterCloseError) Unwrap() error { return e.Err }

// closeAbandonAfter bounds how long Close waits, once ctx has ended, for
// the batch in flight to give up. An insert honours the cancel at once,
// except PostgreSQL's commit, which is not cancellable (log_copy_pg.go)
// and on a dead connection waits out TCP retransmission, for minutes:
// longer than any service manager waits before SIGKILL. (A variable so a
// test can shorten it.)
var closeAbandonAfter = 2 * time.Second

// errAbandoned ends a batch that Close stopped waiting for.
var errAbandoned = errors.New("models: the writer was closed while this batch was in flight")

// Close stops accepting rows and writes what is left: the batch in flight,
// the queue, and the spill file, until ctx ends.
//
// With a spill file, Close first appends everything only in memory (the
// failed or in-flight batch, the queue) to it and syncs it, and only then
// writes: a stop may end in SIGKILL at any moment (systemd's
// TimeoutStopSec, Docker's 10 s) and must lose nothing by it. The rows are
// then written from the file, in order; the batch in flight is copied, not
// taken, and its copy skipped if it commits (inflightSpilledEnd), as in a
// stall.
//
// If ctx ends first (the database is stalled), the batch in flight is
// abandoned (its transaction rolls back; Close waits closeAbandonAfter for
// it at most) and everything still in memory is appended to the spill
// file, to be written by the next writer that starts on it. A batch that
// commits after Close stopped waiting is written again then: a duplicate,
// never a loss. Close returns nil when every row acknowledged since start
// is in the database, and a *WriterCloseError counting exactly what is
// not otherwise. Close is not safe to call twice.
func (w *BatchWriter[T]) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true
	moved := w.spill != nil && !w.spilling && w.unwrittenInMemoryLocked() && w.moveToSpillLocked()
	w.mu.Unlock()
	if moved {
		// The file stays open until spillLeftovers, below, in this goroutine.
		if err := w.spill.sync(); err != nil {
			w.logError("could not flush the spill file to disk at shutdown", "err", err)
		}
	}
	close(w.stop)
	select {
	case <-w.done:
	case <-ctx.Done():
		w.cancel() // abandon the batch in flight; it goes back to the head
		select {
		case <-w.done:
		case <-time.After(closeAbandonAfter):
			w.mu.Lock()
			w.abandoned = true
			w.mu.Unlock()
			w.logError("the batch in flight did not end within " + closeAbandonAfter.String() + " of the shutdown's deadline; closing without it")
		}
	}
	<-w.watchDone // it moves rows to the spill file, which spillLeftovers closes
	defer w.cancel()
	var flushErr error
	for ctx.Err() == nil {
		if flushErr = w.flush(ctx); flushErr == nil {
			break // everything written, spill file included
		}
		select { // the database refused: retry until ctx ends
		case <-ctx.Done():
		case <-time.After(w.opts.FlushInterval):
		}
	}
	if ctx.Err() != nil {
		flushErr = errors.Join(flushErr, ctx.Err())
		if errors.Is(flushErr, context.Canceled) && !errors.Is(ctx.Err(), context.Canceled) {
			flushErr = ctx.Err() // our own cancel of the insert says nothing new
		}
	}
	return w.spillLeftovers(flushErr)
}

// spillLeftovers moves what is still in memory to the spill file, closes
// it, and reports what the database did not get.
func (w *BatchWriter[T]) spillLeftovers(flushErr error) error {
	w.mu.Lock()
	var left []T
	if w.abandoned && w.inflightSpilledEnd == 0 {
		left = w.inflightRows // in memory only, and older than the head and queue
	}
	left = append(append(slices.Clip(left), w.head...), w.queue.all()...)
	w.queue.reset()
	w.head = nil
	var spillErr error
	if len(left) > 0 {
		if w.spill == nil {
			spillErr = errors.New("no spill file")
		} else if spillErr = spillAppend(w.spill, left...); spillErr == nil {
			w.spilled.Add(uint64(len(left)))
			left = nil
		}
	}
	var spilled int64
	var path string
	if w.spill != nil {
		spilled, path = w.spill.rows, w.spill.path
		spillErr = errors.Join(spillErr, w.spill.close())
	}
	w.mu.Unlock()
	w.dropped.Add(uint64(len(left)))
	lost := w.dropped.Load()
	if spilled == 0 && lost == 0 {
		return nil
	}
	err := flushErr
	if len(left) > 0 {
		err = errors.Join(err, spillErr)
	}
	return &WriterCloseError{Name: w.opts.Name, NotWritten: uint64(spilled) + lost, Spilled: spilled, SpillPath: path, Lost: lost, Err: err}
}
