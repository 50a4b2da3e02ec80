package models

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// stalledSink plays a disk that stops answering: every insert blocks until
// release is closed, then goes to the real store.
type stalledSink struct {
	store   *Store
	release chan struct{}
	entered chan struct{} // receives once per insert that started
}

func (s *stalledSink) InsertRefusals(ctx context.Context, rows []Refusal) error {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.store.InsertRefusals(ctx, rows)
}

// flakySink fails the first `fail` inserts, then delegates.
type flakySink struct {
	store *Store
	mu    sync.Mutex
	fail  int
}

func (f *flakySink) InsertRefusals(ctx context.Context, rows []Refusal) error {
	f.mu.Lock()
	failNow := f.fail > 0
	f.fail--
	f.mu.Unlock()
	if failNow {
		return errors.New("disk I/O error (simulated)")
	}
	return f.store.InsertRefusals(ctx, rows)
}

func closeWriter(t *testing.T, w *RefusalWriter) {
	t.Helper()
	if err := w.Close(testCtx(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestRefusalWriterFlushesEverythingOnClose(t *testing.T) {
	s := openTestStore(t)
	// An interval that never fires: only Close can write these rows.
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: time.Hour, FlushBatch: 1 << 30})
	const n = 4321 // more than one transaction's worth
	for i := range n {
		if !w.Write(Refusal{Host: fmt.Sprintf("h%d", i), Tool: "fetch_url"}) {
			t.Fatalf("Write %d was refused", i)
		}
	}
	if got := countRefusals(t, s); got != 0 {
		t.Fatalf("%d rows on disk before Close; the test assumes none were flushed yet", got)
	}
	closeWriter(t, w)
	if got := countRefusals(t, s); got != n {
		t.Errorf("after Close %d rows on disk, want %d", got, n)
	}
	st := w.Stats()
	if st.Written != n || st.Queued != 0 || st.Dropped != 0 {
		t.Errorf("Stats = %+v, want all %d written", st, n)
	}
	// Order survives batching: the newest row is the last written.
	rows, _, _ := s.ListRefusals(testCtx(t), RefusalQuery{Limit: 1})
	if rows[0].Host != fmt.Sprintf("h%d", n-1) {
		t.Errorf("newest row is %q, want h%d", rows[0].Host, n-1)
	}
	if w.Write(Refusal{Host: "late"}) {
		t.Error("Write after Close was accepted")
	}
	if w.Dropped() != 1 {
		t.Errorf("Dropped = %d after one write to a closed writer, want 1", w.Dropped())
	}
}

func TestRefusalWriterFlushesInBackground(t *testing.T) {
	tests := []struct {
		name string
		opts RefusalWriterOptions
		rows int
	}{
		{"on the timer", RefusalWriterOptions{FlushInterval: 20 * time.Millisecond, FlushBatch: 1 << 30}, 3},
		{"on a full batch", RefusalWriterOptions{FlushInterval: time.Hour, FlushBatch: 100}, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStore(t)
			w := NewRefusalWriter(s, tt.opts)
			defer closeWriter(t, w)
			for range tt.rows {
				w.Write(Refusal{Host: "x"})
			}
			deadline := time.Now().Add(10 * time.Second)
			for countRefusals(t, s) != int64(tt.rows) {
				if time.Now().After(deadline) {
					t.Fatalf("rows not flushed in the background: %d of %d on disk", countRefusals(t, s), tt.rows)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// The point of the writer: a stalled disk must never stall the caller.
func TestRefusalWriterDoesNotBlockOnStalledDisk(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10})

	w.Write(Refusal{Host: "first"})
	select {
	case <-sink.entered: // the writer goroutine is now stuck "on disk"
	case <-time.After(10 * time.Second):
		t.Fatal("the writer never started a flush")
	}
	const n = 20000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write blocked while the disk was stalled")
	}
	if st := w.Stats(); st.Queued != n || st.Written != 0 {
		t.Errorf("while stalled: Stats = %+v, want %d queued, 0 written", st, n)
	}
	close(sink.release)
	closeWriter(t, w)
	if got := countRefusals(t, s); got != n+1 {
		t.Errorf("after the disk recovered %d rows on disk, want %d", got, n+1)
	}
}

// A second process holding SQLite's write lock is the real-world stall.
func TestRefusalWriterDoesNotBlockWhileAnotherProcessWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock := other.w.Begin() // BEGIN IMMEDIATE: holds the write lock
	if lock.Error != nil {
		t.Fatal(lock.Error)
	}
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5000 {
			w.Write(Refusal{Host: "x"})
		}
	}()
	select {
	case <-done:
	case <-time.After(4 * time.Second): // below the 5 s busy timeout
		t.Fatal("Write blocked while another connection held the write lock")
	}
	lock.Rollback()
	closeWriter(t, w)
	if got := countRefusals(t, s); got != 5000 {
		t.Errorf("%d rows on disk after the lock was released, want 5000", got)
	}
}

func TestRefusalWriterDropsWhenQueueIsFull(t *testing.T) {
	s := openTestStore(t)
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: time.Hour, FlushBatch: 1 << 30, QueueCap: 10})
	accepted := 0
	for range 100 {
		if w.Write(Refusal{Host: "x"}) {
			accepted++
		}
	}
	if accepted != 10 || w.Dropped() != 90 {
		t.Errorf("accepted %d, dropped %d; want 10 and 90", accepted, w.Dropped())
	}
	// Close writes the 10 and still reports the 90 it never will.
	var ce *WriterCloseError
	if err := w.Close(testCtx(t)); !errors.As(err, &ce) || ce.NotWritten != 90 || ce.Lost != 90 {
		t.Fatalf("Close = %v, want 90 rows not written, lost", err)
	}
	if got := countRefusals(t, s); got != 10 {
		t.Errorf("%d rows on disk, want the 10 accepted", got)
	}
}

func TestRefusalWriterRetriesFailedBatch(t *testing.T) {
	s := openTestStore(t)
	sink := &flakySink{store: s, fail: 1}
	var mu sync.Mutex
	var reported []error
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 10 * time.Millisecond, OnError: func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}})
	for range 7 {
		w.Write(Refusal{Host: "x"})
	}
	deadline := time.Now().Add(10 * time.Second)
	for countRefusals(t, s) != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("failed batch was not retried: %d rows on disk", countRefusals(t, s))
		}
		time.Sleep(5 * time.Millisecond)
	}
	closeWriter(t, w)
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 {
		t.Errorf("OnError called %d times, want 1", len(reported))
	}
	if st := w.Stats(); st.Failures != 1 || st.Written != 7 {
		t.Errorf("Stats = %+v, want 1 failure and 7 written", st)
	}
}

func TestRefusalWriterCloseGivesUpWhenContextEnds(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	defer close(sink.release)
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: time.Hour, FlushBatch: 1 << 30})
	for range 3 {
		w.Write(Refusal{Host: "x"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := w.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want DeadlineExceeded", err)
	}
	if want := "3 rows not written"; !strings.Contains(err.Error(), want) {
		t.Errorf("Close error %q does not say %q", err, want)
	}
}

// recordingSink records each batch's size and holds the first insert until
// release is closed.
type recordingSink struct {
	mu      sync.Mutex
	batches []int
	entered chan struct{}
	release chan struct{}
}

func (s *recordingSink) insert(ctx context.Context, rows []Refusal) error {
	s.mu.Lock()
	first := len(s.batches) == 0
	s.batches = append(s.batches, len(rows))
	s.mu.Unlock()
	if first {
		close(s.entered)
		<-s.release
	}
	return nil
}

func (s *recordingSink) sizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.batches...)
}

// Rows that come in while a batch is written wait for a full batch (or the
// tick), rather than going at once as a small batch of their own: every
// transaction rewrites the pages it touches, so small batches cost the
// store more per row.
func TestWriterLetsRowsGatherAfterABatch(t *testing.T) {
	sink := &recordingSink{entered: make(chan struct{}), release: make(chan struct{})}
	w, err := NewBatchWriter(sink.insert, RefusalWriterOptions{FlushInterval: time.Hour, FlushBatch: 100})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		w.Write(Refusal{Host: "x"})
	}
	<-sink.entered // the full batch is being written
	for range 10 {
		w.Write(Refusal{Host: "y"})
	}
	close(sink.release)
	time.Sleep(200 * time.Millisecond)
	if got := sink.sizes(); len(got) != 1 || got[0] != 100 {
		t.Fatalf("batches written after the first = %v, want [100]: 10 rows must wait for a full batch or the tick", got)
	}
	for range 90 {
		w.Write(Refusal{Host: "z"})
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(sink.sizes()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := sink.sizes(); len(got) != 2 || got[1] != 100 {
		t.Fatalf("batches = %v, want [100 100] once a full batch has gathered", got)
	}
	w.Write(Refusal{Host: "last"})
	if err := w.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := sink.sizes(); len(got) != 3 || got[2] != 1 {
		t.Fatalf("batches = %v, want a last batch of 1 written by Close", got)
	}
}
