package models

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostsInOrder reads every refusal's host, oldest first.
func hostsInOrder(t *testing.T, s *Store) []string {
	t.Helper()
	var hosts []string
	if err := s.r.Table("refusals").Order("id").Pluck("host", &hosts).Error; err != nil {
		t.Fatal(err)
	}
	return hosts
}

// wantHosts checks the database holds h0…h(n-1), each once, in order.
func wantHosts(t *testing.T, s *Store, n int) {
	t.Helper()
	hosts := hostsInOrder(t, s)
	if len(hosts) != n {
		t.Fatalf("%d rows in the database, want %d", len(hosts), n)
	}
	for i, h := range hosts {
		if h != fmt.Sprintf("h%d", i) {
			t.Fatalf("row %d is %q, want h%d: the order of writes was not kept", i, h, i)
		}
	}
}

// Finding 1: with the database stalled, rows past the queue's bound were
// dropped. Now they spill to disk and reach the database, in order, once
// it answers.
func TestWriterSpillsInsteadOfDroppingDuringAStall(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10,
		QueueCap: 1000, QueueBytes: 256 << 10, StallAfter: 50 * time.Millisecond, SpillPath: spill})
	w.Write(Refusal{Host: "h0"})
	<-sink.entered // the first batch is stuck "on disk"
	const n = 20000
	long := strings.Repeat("p", 1500)
	for i := 1; i < n; i++ {
		if !w.Write(Refusal{Host: fmt.Sprintf("h%d", i), URL: "http://x.example/" + long}) {
			t.Fatalf("Write %d was refused during the stall", i)
		}
		if i == n/2 {
			time.Sleep(60 * time.Millisecond) // past the stall threshold
		}
	}
	st := w.Stats()
	if st.Dropped != 0 || st.Spilled == 0 || !st.Stalled || st.QueuedBytes > 256<<10 {
		t.Fatalf("during the stall: %+v; want nothing dropped, rows spilled, memory within its bound, stalled", st)
	}
	info, err := os.Stat(st.SpillPath)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("spill file %q: %v, mode %v; want it there, 0600", st.SpillPath, err, info.Mode())
	}
	close(sink.release)
	// Draining is checked, not its speed: 30 MB through SQLite under -race
	// on a busy machine took close to 20 s.
	deadline := time.Now().Add(90 * time.Second)
	for w.Stats().Written != n {
		if time.Now().After(deadline) {
			t.Fatalf("not drained after the stall: %+v", w.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := w.Stats(); st.Stalled || st.SpillRows != 0 || st.SpillBytes != 0 || st.Batches == 0 || st.StallTotal < 50*time.Millisecond {
		t.Errorf("after draining: %+v; want not stalled, spill empty, batches and stall time counted", st)
	}
	closeWriter(t, w)
	wantHosts(t, s, n)
	if info, err := os.Stat(st.SpillPath); err != nil || info.Size() != 0 {
		t.Errorf("drained spill file: %v, %d bytes; want it emptied", err, info.Size())
	}
}

// The real stall: another process holds SQLite's write lock.
func TestWriterLosesNothingWhileAnotherProcessHoldsTheLock(t *testing.T) {
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
	lock := other.w.Begin()
	if lock.Error != nil {
		t.Fatal(lock.Error)
	}
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, QueueCap: 500,
		StallAfter: 100 * time.Millisecond, SpillPath: path + ".refusals.spill"})
	const n = 5000
	start := time.Now()
	for i := range n {
		w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
		if i%1000 == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("writes took %v while the lock was held; Write must not wait", d)
	}
	if st := w.Stats(); st.Dropped != 0 || st.Spilled == 0 {
		t.Fatalf("while locked: %+v; want rows spilled, none dropped", st)
	}
	lock.Rollback()
	closeWriter(t, w)
	wantHosts(t, s, n)
}

// Finding 3: SIGTERM during a stall lost the queue and the batch in flight
// and reported "0 rows not written". Now Close spills them and counts them
// exactly, and the next writer on the file writes them.
func TestCloseDuringAStallSpillsEverythingAndTheNextStartWritesIt(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10,
		QueueCap: 300, StallAfter: time.Hour, SpillPath: spill})
	const n = 1000
	w.Write(Refusal{Host: "h0"})
	<-sink.entered
	for i := 1; i < n; i++ {
		w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
	}
	if st := w.Stats(); st.InFlight != 0 || st.Queued != 0 || st.SpillRows != n || st.NotWritten() != n {
		t.Fatalf("before Close: %+v; the test wants every row, the one in flight too, in the spill file", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := w.Close(ctx)
	var ce *WriterCloseError
	if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want a *WriterCloseError for the deadline", err)
	}
	if ce.NotWritten != n || ce.Spilled != n || ce.Lost != 0 {
		t.Fatalf("Close counted %+v, want all %d not written and kept, none lost", ce, n)
	}
	if want := fmt.Sprintf("%d rows not written", n); !strings.Contains(err.Error(), want) {
		t.Errorf("Close says %q, want it to say %q", err, want)
	}
	if got := countRefusals(t, s); got != 0 {
		t.Fatalf("%d rows reached the database though it was stalled", got)
	}
	// The next start replays the file, before anything new.
	next := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, SpillPath: spill})
	next.Write(Refusal{Host: fmt.Sprintf("h%d", n)})
	closeWriter(t, next)
	wantHosts(t, s, n+1)
}

// Without a spill file the count still covers every row: the batch in
// flight, the queue and the earlier drops.
func TestCloseCountsDropsInFlightAndQueued(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	defer close(sink.release)
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 1 << 30, QueueCap: 10})
	w.Write(Refusal{Host: "x"})
	<-sink.entered // 1 in flight
	for range 14 {
		w.Write(Refusal{Host: "x"}) // 10 queued, 4 dropped
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var ce *WriterCloseError
	if err := w.Close(ctx); !errors.As(err, &ce) || ce.NotWritten != 15 || ce.Lost != 15 {
		t.Fatalf("Close = %v (%+v); want 15 not written, all lost", err, ce)
	}
}

// kill -9 during a stall loses nothing: once stalled, every acknowledged
// row, the batch in flight included, is in the spill file (each append is
// one write to it); the next writer adopts the file and writes it once.
func TestSpillSurvivesAKilledProcess(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	defer close(sink.release)
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10,
		StallAfter: 20 * time.Millisecond, SpillPath: spill})
	w.Write(Refusal{Host: "h0"})
	<-sink.entered
	time.Sleep(30 * time.Millisecond)
	const n = 300
	for i := 1; i < n; i++ {
		w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
	}
	// The batch in flight is in the file too: nothing is only in memory.
	if st := w.Stats(); st.SpillRows != n || st.NotWritten() != n {
		t.Fatalf("after the stall threshold: %+v; want all %d rows in the spill file", st, n)
	}
	// "kill -9": the process's file descriptor (and its lock) goes away,
	// nothing else runs. A torn half line plays a crash mid-write.
	stopWatchdog(w)
	w.mu.Lock()
	f := w.spill.f
	_, _ = f.Write([]byte(`{"Host":"torn`))
	w.mu.Unlock()
	_ = f.Close()

	next := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, SpillPath: spill})
	closeWriter(t, next)
	wantHosts(t, s, n)
}

// A drain interrupted after a committed batch resumes after it: the
// position file is what keeps a restart from writing a batch twice.
func TestSpillResumesFromItsPosition(t *testing.T) {
	s := openTestStore(t)
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	sp, err := openSpill(spill)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]Refusal, 10)
	for i := range rows {
		rows[i] = Refusal{Host: fmt.Sprintf("h%d", i)}
	}
	if err := spillAppend(sp, rows...); err != nil {
		t.Fatal(err)
	}
	first, end, _, err := spillRead[Refusal](sp, 0, sp.size, 4)
	if err != nil || len(first) != 4 {
		t.Fatalf("read %d rows, %v", len(first), err)
	}
	if err := s.InsertRefusals(testCtx(t), first); err != nil {
		t.Fatal(err)
	}
	if err := sp.committed(end, len(first)); err != nil {
		t.Fatal(err)
	}
	_ = sp.f.Close() // killed here
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, SpillPath: spill})
	closeWriter(t, w)
	wantHosts(t, s, 10)
}

// Two processes on one database each spill to their own file.
func TestTwoWritersTakeTwoSpillFiles(t *testing.T) {
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	a, err := openSpill(spill)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	b, err := openSpill(spill)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	if a.path == b.path {
		t.Fatalf("both writers spill to %s", a.path)
	}
}

// Close with everything still in memory: the queue goes to the spill file.
func TestCloseSpillsTheQueue(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	defer close(sink.release)
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 1 << 30, StallAfter: time.Hour, SpillPath: spill})
	w.Write(Refusal{Host: "h0"})
	<-sink.entered
	for i := 1; i < 50; i++ {
		w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
	}
	if st := w.Stats(); st.InFlight != 1 || st.Queued != 49 || st.SpillRows != 0 {
		t.Fatalf("before Close: %+v; want 1 in flight and 49 queued", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var ce *WriterCloseError
	if err := w.Close(ctx); !errors.As(err, &ce) || ce.NotWritten != 50 || ce.Spilled != 50 || ce.Lost != 0 {
		t.Fatalf("Close = %v, want 50 not written, all kept", err)
	}
	next := NewRefusalWriter(s, RefusalWriterOptions{SpillPath: spill})
	closeWriter(t, next)
	wantHosts(t, s, 50)
}

// A file a killed process left under a name no writer takes again (the
// fourth process's, say) is adopted by the next writer that starts.
func TestAnOrphanedSpillFileIsAdopted(t *testing.T) {
	s := openTestStore(t)
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	orphan, err := openSpill(spill + ".3")
	if err != nil {
		t.Fatal(err)
	}
	rows := []Refusal{{Host: "h0"}, {Host: "h1"}, {Host: "h2"}}
	if err := spillAppend(orphan, rows...); err != nil {
		t.Fatal(err)
	}
	_ = orphan.f.Close() // killed
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, SpillPath: spill})
	closeWriter(t, w)
	wantHosts(t, s, 3)
	if info, err := os.Stat(spill + ".3"); err != nil || info.Size() != 0 {
		t.Fatalf("the orphan after adoption: %v, %d bytes; want it emptied", err, info.Size())
	}
}

// A queue that reaches its bound while the database still answers (it is
// just slower than the rows arriving) spills too, and says so: every row
// then costs the disk a write and a read back, which an operator sizing
// the database needs to see in the log, not only as a counter. When the
// spill file is drained that is said too.
func TestSpillingForAFullQueueIsLogged(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	var logged lockedLines
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10,
		QueueCap: 50, StallAfter: time.Hour, SpillPath: filepath.Join(t.TempDir(), "o.db.refusals.spill"),
		Name: "refusal log", Log: slog.New(slog.NewTextHandler(&logged, nil))})
	w.Write(Refusal{Host: "h0"})
	<-sink.entered // the first batch is in flight, slowly
	const n = 200
	for i := 1; i < n; i++ {
		if !w.Write(Refusal{Host: fmt.Sprintf("h%d", i)}) {
			t.Fatalf("Write %d was refused", i)
		}
	}
	if st := w.Stats(); st.Spilled == 0 || st.Stalled {
		t.Fatalf("with %d rows behind a queue of 50: %+v; want rows spilled, no stall called", n, st)
	}
	if got := logged.String(); !strings.Contains(got, "refusal log: the queue reached its bound; spilling rows to disk") || strings.Contains(got, "stalled") {
		t.Fatalf("log after the queue filled:\n%s\nwant the queue's bound named as the reason, not a stall", got)
	}
	close(sink.release)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logged.String(), "the spill file is drained") {
		if time.Now().After(deadline) {
			t.Fatalf("no line saying the spill file drained; stats %+v, log:\n%s", w.Stats(), logged.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	closeWriter(t, w)
	wantHosts(t, s, n)
}

// lockedLines is an io.Writer for a logger that a writer's goroutine and
// the test read at once.
type lockedLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// A queue that filled first and a database that then stops answering:
// the stall is said too, and its end (found in review: once spilling
// had begun for the full queue, a stall was never logged, nor its end).
func TestAStallAfterTheQueueFilledIsLogged(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	var logged lockedLines
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10,
		QueueCap: 20, StallAfter: 50 * time.Millisecond, SpillPath: filepath.Join(t.TempDir(), "o.db.refusals.spill"),
		Name: "refusal log", Log: slog.New(slog.NewTextHandler(&logged, nil))})
	w.Write(Refusal{Host: "h0"})
	<-sink.entered
	for i := 1; i < 50; i++ {
		w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
	}
	if got := logged.String(); !strings.Contains(got, "the queue reached its bound") || strings.Contains(got, "stalled") {
		t.Fatalf("log once the queue filled:\n%s", got)
	}
	time.Sleep(60 * time.Millisecond) // the batch in flight is past StallAfter now
	w.Write(Refusal{Host: "h50"})
	if got := logged.String(); !strings.Contains(got, "database stalled; spilling rows to disk") {
		t.Fatalf("no stall logged once the database stopped answering:\n%s", got)
	}
	close(sink.release)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logged.String(), "database answers again") {
		if time.Now().After(deadline) {
			t.Fatalf("the stall's end was not logged:\n%s", logged.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	closeWriter(t, w)
	wantHosts(t, s, 51)
}

// Found in review: when spilling began, the oldest rows (the failed batch,
// or the one in flight) reached the file, and then the queue's append
// failed (a disk filling up). The queue stayed in memory and new rows went
// to the file, after the oldest: the queue was then written first, so the
// oldest rows got newer IDs than rows that came after them. Now the
// oldest rows are taken back out of the file, and all are written in order.
func TestASpillThatFailsHalfWayKeepsTheOrder(t *testing.T) {
	const n = 60
	for _, oldest := range []string{"the failed batch", "the batch in flight"} {
		t.Run(oldest, func(t *testing.T) {
			s := openTestStore(t)
			sink := &gatedSink{store: s, entered: make(chan struct{}, 1), gate: make(chan struct{})}
			opts := RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10,
				QueueCap: 50, StallAfter: time.Hour, SpillPath: filepath.Join(t.TempDir(), "o.db.refusals.spill")}
			if oldest == "the failed batch" {
				// Written once, by the flush below, and not again until
				// Close: no tick, and no batch full enough to wake the writer.
				opts.FlushInterval, opts.FlushBatch = time.Hour, 1000
				close(sink.gate)
				sink.failing.Store(true)
			}
			w := newRefusalWriter(sink, opts)
			// Appends of one row succeed, larger ones fail.
			failed := 0
			w.mu.Lock()
			w.spill.failAppend = func(rows int) error {
				if rows > 1 {
					failed++
					return errors.New("no space left on device (simulated)")
				}
				return nil
			}
			w.mu.Unlock()
			// h0 alone in the first batch: failed, or held in flight.
			w.Write(Refusal{Host: "h0"})
			if oldest == "the failed batch" {
				if err := w.flush(testCtx(t)); err == nil {
					t.Fatal("the first batch was written; the test wants it failed")
				}
			}
			<-sink.entered
			// h1…h50 fill the queue; h51 starts the spill, whose append of
			// the queue fails; h51…h59 go to the file one by one.
			for i := 1; i < n; i++ {
				w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
			}
			w.mu.Lock()
			w.spill.failAppend = nil
			appendsFailed := failed
			w.mu.Unlock()
			// Reported, not fatal: the order below says what went wrong.
			if st := w.Stats(); appendsFailed != 1 || st.Dropped != 0 || st.SpillRows != n-51 || st.Queued+st.InFlight != 51 {
				t.Errorf("after the failed spill (%d appends failed): %+v; want one append failed, nothing dropped, h0…h50 in memory and h51…h59 in the file", appendsFailed, st)
			}
			if oldest == "the batch in flight" {
				sink.failing.Store(true) // the batch in flight fails…
				close(sink.gate)
				for deadline := time.Now().Add(10 * time.Second); w.Stats().Failures == 0; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the batch in flight never returned")
					}
				}
			}
			sink.failing.Store(false) // …and the database answers again
			closeWriter(t, w)
			wantHosts(t, s, n)
		})
	}
}

// gatedSink waits at gate on every insert and fails while failing is set.
type gatedSink struct {
	store   *Store
	entered chan struct{} // buffered(1): an insert started since the last receive
	gate    chan struct{}
	failing atomic.Bool
}

func (g *gatedSink) InsertRefusals(ctx context.Context, rows []Refusal) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.gate
	if g.failing.Load() {
		return errors.New("connection reset (simulated)")
	}
	return g.store.InsertRefusals(ctx, rows)
}
