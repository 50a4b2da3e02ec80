package models

import "time"

// watch is a writer's stall watchdog, running while it has a spill file.
// A stall is the oldest unwritten batch waiting past StallAfter, and the
// writer goroutine cannot notice it: it is the one waiting, inside the
// insert. Write noticed it, but only when a row came in, so in a quiet
// stall the rows acknowledged before it (the batch in flight, the queue)
// stayed in memory, exposed to a kill -9, for as long as the stall
// lasted. The watchdog looks every FlushInterval, so they are on disk at
// most StallAfter + FlushInterval after that batch began, the bound the
// guide gives for kill -9 (1.15 s by default).
//
// It also fsyncs the spill file every FlushInterval while the file holds
// rows, which bounds what a power loss takes. That was done when a flush
// round ended, so never while the writer was stuck in a stall, and under
// w.mu, so a slow disk held up every Write on the request path. Here the
// fsync runs outside w.mu: appends, a truncate or a reset may run
// meanwhile, and that is safe, as the file stays open until Close, which
// waits for the watchdog to exit first; what an fsync must cover is what
// was appended before it began.
func (w *BatchWriter[T]) watch() {
	defer close(w.watchDone)
	t := time.NewTicker(w.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		w.mu.Lock()
		w.spillIfDueLocked(time.Now().UTC(), false)
		holds := w.spill.pending() > 0
		w.mu.Unlock()
		if holds {
			_ = w.spill.sync() // errors ignored, as they always were: one a tick would flood the log
		}
	}
}
