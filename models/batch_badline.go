package models

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// An undecodable line in the spill file: one written by a version whose
// row fields differ, or damaged on disk. It can never be written, and it
// used to be retried for ever, silently: every row after it, new ones
// included (a spilling writer appends them behind it), waited until the
// file reached its bound, and then rows were dropped.
//
// Why move it aside rather than stop: the line is lost to the database
// either way, until a person looks at it, and stopping loses every row
// after it too. Why only the line, not the whole file: the rows around it
// decode, and are written in order as if it were not there. The line is
// kept, byte for byte, in FILE.bad (appended, synced, 0600) before the
// position moves past it, so nothing is lost even to a crash in between (a
// crash there copies it a second time). The move is logged as an error,
// naming the file, the byte and FILE.bad, and counted as a batch failure,
// so outbound_log_batch_failures_total shows it. Only if FILE.bad cannot
// be written does the line stay, and the writer stalls on it, counted and
// stalled (Stats, /healthz), with the remedy in the error: move the spill
// file aside.

// setAside moves the bad lines in [off, end) of the spill file, which
// spillRead could not decode (why), to FILE.bad and past the drain
// position. It runs on the writer goroutine, outside w.mu: only that
// goroutine reads lines or moves the position, and appends never touch
// bytes before the file's size.
func (w *BatchWriter[T]) setAside(off, end int64, bad int, why error) error {
	w.failures.Add(1)
	dst := w.spill.path + ".bad"
	if err := copyToBad(w.spill.f, off, end, dst); err != nil {
		w.stalledOnSpill()
		return fmt.Errorf("models: spill file %q has an undecodable line at byte %d (%v), and it could not be moved to %s (%w); move the spill file aside to go on without it", w.spill.path, off, why, dst, err)
	}
	w.mu.Lock()
	posErr := w.spill.committed(end, bad)
	w.mu.Unlock()
	w.logError("moved undecodable lines out of the spill file; the rows after them are written as usual; look at them, they will not reach the database",
		"file", w.spill.path, "byte", off, "lines", bad, "moved_to", dst, "err", why)
	if posErr != nil {
		w.logError("could not save the spill file's position; a restart may move the same lines again", "err", posErr)
	}
	return nil
}

// stalledOnSpill starts timing a stall when the spill file cannot be read
// or its bad lines moved: the writer is stuck as surely as on a database
// that does not answer, and Stats and /healthz must say so.
func (w *BatchWriter[T]) stalledOnSpill() {
	w.mu.Lock()
	if w.stallSince.IsZero() {
		w.stallSince = time.Now().UTC()
	}
	w.mu.Unlock()
}

// copyToBad appends the bytes [off, end) of f to the file dst, synced.
func copyToBad(f *os.File, off, end int64, dst string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.NewSectionReader(f, off, end-off))
	return errors.Join(err, out.Sync(), out.Close())
}
