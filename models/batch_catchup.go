package models

// Leaving spill mode. While spilling, every new row is appended to the
// spill file, so under steady traffic a row arrives during every commit
// and the file is never empty at a batch boundary: waiting for an empty
// file kept the writer spilling for good, the file growing until its
// bound and every row after that dropped, with the database healthy.
//
// So the writer leaves spill mode as soon as it has caught up: when the
// last batch committed (no stall is being timed) and the next batch read
// from the file takes all the file holds. From then on new rows queue in
// memory, and the rows still in the file, that last batch (the tail, up
// to tailEnd), are older than all of them: they are written before the
// queue, and the file is emptied once they are committed. The switch and
// every Write happen under w.mu and nothing is appended to the file while
// not spilling, so a Write is in the file before tailEnd or in the queue
// after it: none is lost, none overtakes an older one. The tail stays on
// disk until committed, so a kill -9 loses no more than before.

// tailPendingLocked reports whether the spill file still holds rows of
// an ended spill, older than everything queued in memory.
func (w *BatchWriter[T]) tailPendingLocked() bool {
	return w.spill != nil && w.spill.readOff < w.tailEnd
}

// spillBoundsLocked is where the next batch read from the spill file
// starts and where it must stop: at the tail's end while the tail is
// pending, else at the file's end, a snapshot that only covers complete
// lines. When that batch is the whole file and the writer has caught up,
// spilling ends here, before the batch is read (see above).
func (w *BatchWriter[T]) spillBoundsLocked() (off, end int64) {
	off, end = w.spill.readOff, w.spill.size
	switch {
	case off < w.tailEnd:
		end = w.tailEnd
	case w.spilling && w.stallSince.IsZero() && len(w.head) == 0 && w.queue.len() == 0 &&
		w.spill.rows <= refusalRowsPerTxLimit:
		// stallSince is zero only when the last batch committed: a
		// database that fails every batch is not caught up, and its rows
		// keep going to disk.
		w.spilling, w.tailEnd, w.leftSpill = false, end, true
	}
	return off, end
}

// endSpillLocked ends spilling when the file holds nothing left to write
// and nothing waits in memory before it.
func (w *BatchWriter[T]) endSpillLocked() {
	if w.spilling {
		w.spilling, w.tailEnd, w.leftSpill = false, w.spill.size, true
	}
	w.emptyIfDrainedLocked()
}

// emptyIfDrainedLocked empties the spill file once spilling has ended and
// every row it held is committed, so the file never grows past one spill
// (its bound, SpillMaxBytes, is on its size).
func (w *BatchWriter[T]) emptyIfDrainedLocked() {
	if !w.leftSpill || w.spilling || w.spill.pending() > 0 {
		return
	}
	w.leftSpill, w.tailEnd = false, 0
	if err := w.spill.reset(); err != nil {
		w.logError("could not empty the drained spill file", "err", err)
	}
	w.logInfo("the spill file is drained; rows queue in memory again", "spilled_total", w.spilled.Load())
}
