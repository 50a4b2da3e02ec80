package models

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Found in review: spilling ended only when a flush round began with
// nothing at all pending in the spill file, and under steady traffic a row
// arrives during every commit, so that never happened. The file then grew
// without bound, and once it reached SpillMaxBytes every row was dropped,
// with the database healthy and almost nothing pending. Here a row batch
// arrives during every commit (and a second producer writes meanwhile):
// the writer must catch up, go back to memory and empty the file, losing
// and reordering nothing.
func TestSpillEndsUnderSteadyTraffic(t *testing.T) {
	const (
		calls   = 1000 // inserts that each see rows arrive while they run
		perCall = 10   // a full batch, so the writer goes on at once
		first   = 40   // enough to fill the queue and start spilling
	)
	var (
		mu    sync.Mutex
		got   []string
		ncall int
		w     *BatchWriter[Refusal]
	)
	gate := make(chan struct{})
	entered := make(chan struct{})
	finished := make(chan struct{})
	insert := func(ctx context.Context, rows []Refusal) error {
		mu.Lock()
		ncall++
		n := ncall
		for _, r := range rows {
			got = append(got, r.Host)
		}
		mu.Unlock()
		if n == 1 {
			close(entered)
			<-gate
		}
		if n > 1 && n <= calls+1 {
			for i := range perCall {
				w.Write(Refusal{Host: fmt.Sprintf("a%d", first+(n-2)*perCall+i)})
			}
		}
		if n == calls+1 {
			close(finished)
		}
		return nil
	}
	var logged lockedLines
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	var err error
	w, err = NewBatchWriter(insert, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10,
		QueueCap: 20, StallAfter: time.Hour, SpillMaxBytes: 64 << 10, SpillPath: spill,
		Name: "refusal log", Log: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Refusal{Host: "a0"})
	<-entered
	for i := 1; i < first; i++ {
		w.Write(Refusal{Host: fmt.Sprintf("a%d", i)})
	}
	if st := w.Stats(); st.SpillRows == 0 {
		t.Fatalf("after %d rows behind a queue of 20: %+v; the test wants the writer spilling", first, st)
	}
	// A second producer, so that Writes also race the switch back to
	// memory, not only arrive while a batch commits.
	stopB := make(chan struct{})
	doneB := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stopB:
				doneB <- n
				return
			default:
			}
			w.Write(Refusal{Host: fmt.Sprintf("b%d", n)})
			n++
			time.Sleep(200 * time.Microsecond)
		}
	}()
	close(gate)
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		t.Fatalf("not %d inserts after a minute; stats %+v", calls, w.Stats())
	}
	close(stopB)
	nb := <-doneB
	if d := w.Dropped(); d != 0 {
		t.Fatalf("%d rows dropped with the database answering every batch; stats %+v", d, w.Stats())
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logged.String(), "the spill file is drained") {
		if time.Now().After(deadline) {
			t.Fatalf("spilling never ended: stats %+v, log:\n%s", w.Stats(), logged.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	closeWriter(t, w)
	if info, err := os.Stat(spill); err != nil || info.Size() != 0 {
		t.Fatalf("spill file after Close: %v, %d bytes; want it emptied", err, info.Size())
	}
	mu.Lock()
	defer mu.Unlock()
	na := first + calls*perCall
	wantInOrder(t, got, "a", na)
	wantInOrder(t, got, "b", nb)
	if len(got) != na+nb {
		t.Fatalf("%d rows written, want %d: some twice", len(got), na+nb)
	}
}

// wantInOrder checks that hosts holds prefix0…prefix(n-1) each once, in
// that order, among other rows.
func wantInOrder(t *testing.T, hosts []string, prefix string, n int) {
	t.Helper()
	next := 0
	for _, h := range hosts {
		if !strings.HasPrefix(h, prefix) {
			continue
		}
		if want := fmt.Sprintf("%s%d", prefix, next); h != want {
			t.Fatalf("row %q where %q was next: the order of writes was not kept", h, want)
		}
		next++
	}
	if next != n {
		t.Fatalf("%d rows %s…, want %d", next, prefix, n)
	}
}

// The last batch read from the spill file when spilling ends (the tail)
// can fail: rows written meanwhile queue in memory, and the tail, older
// than all of them, must still be written first.
func TestAFailedTailIsWrittenBeforeTheQueue(t *testing.T) {
	var (
		mu    sync.Mutex
		got   [][]string // each insert's rows, failed ones too
		w     *BatchWriter[Refusal]
		spill = filepath.Join(t.TempDir(), "o.db.refusals.spill")
	)
	gate := make(chan struct{})
	entered := make(chan struct{})
	insert := func(ctx context.Context, rows []Refusal) error {
		hosts := make([]string, len(rows))
		for i, r := range rows {
			hosts[i] = r.Host
		}
		mu.Lock()
		got = append(got, hosts)
		n := len(got)
		mu.Unlock()
		switch n {
		case 1: // h0, from memory: held until the queue has spilled
			close(entered)
			<-gate
		case 2: // the whole spill file, after a commit: the tail
			for i := 30; i < 35; i++ {
				w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
			}
			return fmt.Errorf("connection reset (simulated)")
		}
		return nil
	}
	var err error
	w, err = NewBatchWriter(insert, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 1000,
		QueueCap: 10, StallAfter: time.Hour, SpillPath: spill})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Refusal{Host: "h0"})
	<-entered
	for i := 1; i < 30; i++ {
		w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
	}
	close(gate)
	for deadline := time.Now().Add(10 * time.Second); w.Stats().Written != 35; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not all written: %+v", w.Stats())
		}
	}
	closeWriter(t, w)
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 3 || len(got[1]) != 29 || got[1][0] != "h1" {
		t.Fatalf("inserts %v; the test wants h1…h29 read from the spill file as one batch, second", got)
	}
	if st := w.Stats(); st.Failures != 1 || st.Dropped != 0 {
		t.Fatalf("stats %+v; want the one failure, nothing dropped", st)
	}
	var written []string
	written = append(written, got[0]...)
	for _, b := range got[2:] {
		written = append(written, b...)
	}
	wantInOrder(t, written, "h", 35)
}
