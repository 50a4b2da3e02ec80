package models

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// spillLines counts the lines of the spill file at path.
func spillLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// closeWithRowsInMemory starts a writer on a spill file with 1 row in
// flight in sink (h0) and 49 queued (h1…h49), none spilled, and calls
// Close(ctx with timeout) in the background.
func closeWithRowsInMemory(t *testing.T, insert func(context.Context, []Refusal) error, entered <-chan struct{}, timeout time.Duration) (spill string, w *RefusalWriter, closed <-chan error) {
	t.Helper()
	spill = filepath.Join(t.TempDir(), "o.db.refusals.spill")
	w = newBatchWriter(insert, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 1 << 30, StallAfter: time.Hour, SpillPath: spill})
	w.Write(Refusal{Host: "h0"})
	<-entered
	for i := 1; i < 50; i++ {
		w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
	}
	if st := w.Stats(); st.InFlight != 1 || st.Queued != 49 || st.SpillRows != 0 {
		t.Fatalf("before Close: %+v; want 1 in flight and 49 queued", st)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		done <- w.Close(ctx)
	}()
	return spill, w, done
}

// SIGTERM left the queue and the batch in flight only in memory for the
// whole stop (the grace period, then the wait for the batch in flight), so
// a SIGKILL at the end of a service manager's stop timeout lost them. Now
// Close puts them in the spill file first: 100 ms into a stop whose grace
// is 5 s, all 50 are on disk. The batch in flight then commits, and is
// written once: its copy in the file is skipped.
func TestCloseSpillsWhatIsInMemoryBeforeTheGrace(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	spill, _, closed := closeWithRowsInMemory(t, sink.InsertRefusals, sink.entered, 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	if got := spillLines(t, spill); got != 50 {
		close(sink.release)
		<-closed
		t.Fatalf("100 ms into Close the spill file holds %d rows, want all 50: a SIGKILL now would lose the rest", got)
	}
	close(sink.release) // the database answers: the batch in flight commits
	if err := <-closed; err != nil {
		t.Fatalf("Close = %v, want every row written", err)
	}
	wantHosts(t, s, 50)
	next := NewRefusalWriter(s, RefusalWriterOptions{SpillPath: spill})
	closeWriter(t, next)
	wantHosts(t, s, 50) // nothing left in the file to write twice
}

// The same stop with the database stalled to the end: the batch in flight
// is abandoned, Close counts all 50 as kept, and the next start writes
// each once, in order.
func TestCloseDuringAStallKeepsWhatItSpilledFirst(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	defer close(sink.release)
	spill, _, closed := closeWithRowsInMemory(t, sink.InsertRefusals, sink.entered, 300*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	if got := spillLines(t, spill); got != 50 {
		t.Errorf("100 ms into Close the spill file holds %d rows, want all 50", got)
	}
	var ce *WriterCloseError
	if err := <-closed; !errors.As(err, &ce) || ce.NotWritten != 50 || ce.Spilled != 50 || ce.Lost != 0 {
		t.Fatalf("Close = %v, want 50 not written, all kept", err)
	}
	next := NewRefusalWriter(s, RefusalWriterOptions{SpillPath: spill})
	closeWriter(t, next)
	wantHosts(t, s, 50)
}

// deafSink is a database whose insert does not end when its context is
// cancelled (PostgreSQL's commit is not cancellable, and waits out TCP
// retransmission on a dead connection).
type deafSink struct {
	store   *Store
	entered chan struct{}
	release chan struct{}
}

func (d *deafSink) insert(_ context.Context, rows []Refusal) error {
	select {
	case d.entered <- struct{}{}:
	default:
	}
	<-d.release
	return d.store.InsertRefusals(context.Background(), rows)
}

// Close waited for the batch in flight without a bound once ctx ended. Now
// it waits closeAbandonAfter, then returns, with the batch counted as kept
// in the spill file. Should it commit later, the next start writes it
// again: a duplicate, never a loss.
func TestCloseDoesNotWaitForeverForTheBatchInFlight(t *testing.T) {
	defer func(d time.Duration) { closeAbandonAfter = d }(closeAbandonAfter)
	closeAbandonAfter = 100 * time.Millisecond
	s := openTestStore(t)
	sink := &deafSink{store: s, entered: make(chan struct{}, 1), release: make(chan struct{})}
	spill, w, closed := closeWithRowsInMemory(t, sink.insert, sink.entered, 50*time.Millisecond)
	var err error
	select {
	case err = <-closed:
	case <-time.After(5 * time.Second):
		close(sink.release)
		<-closed
		t.Fatal("Close still waits for the batch in flight 5 s after its context ended")
	}
	var ce *WriterCloseError
	if !errors.As(err, &ce) || ce.NotWritten != 50 || ce.Spilled != 50 || ce.Lost != 0 {
		t.Fatalf("Close = %v, want 50 not written, all kept", err)
	}
	close(sink.release) // the abandoned batch commits after all
	<-w.done
	if got := spillLines(t, spill); got != 50 {
		t.Fatalf("after the abandoned batch ended the spill file holds %d rows, want 50", got)
	}
	next := NewRefusalWriter(s, RefusalWriterOptions{SpillPath: spill})
	closeWriter(t, next)
	seen := map[string]int{}
	for _, h := range hostsInOrder(t, s) {
		seen[h]++
	}
	for i := range 50 {
		if h := fmt.Sprintf("h%d", i); seen[h] == 0 {
			t.Errorf("%s was lost", h)
		}
	}
}
