package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowWriter records each write and takes a while over it, as a busy disk
// or pipe does.
type slowWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.buf.Write(p)
}

func TestBatchedLogKeepsEveryLineWholeAndInOrderInFewerWrites(t *testing.T) {
	w := &slowWriter{}
	b := newBatchedLog(w)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(b, "{\"writer\":%d,\"line\":%d}\n", g, i)
			}
		})
	}
	wg.Wait()
	b.Close()
	fmt.Fprintf(b, "after close\n") // straight through
	got := strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
	if len(got) != writers*lines+1 || got[len(got)-1] != "after close" {
		t.Fatalf("%d lines written, want %d and the line after Close last", len(got), writers*lines+1)
	}
	next := make([]int, writers)
	for _, line := range got[:len(got)-1] {
		var g, i int
		if _, err := fmt.Sscanf(line, "{\"writer\":%d,\"line\":%d}", &g, &i); err != nil {
			t.Fatalf("a line was cut or mixed: %q", line)
		}
		if i != next[g] {
			t.Fatalf("writer %d's line %d came where line %d should", g, i, next[g])
		}
		next[g]++
	}
	if w.writes*10 > writers*lines {
		t.Errorf("%d lines took %d writes: lines that arrive during a write should go in the next one together", writers*lines, w.writes)
	}
}

func TestBatchedLogWritesAnIdleLineAtOnce(t *testing.T) {
	w := &slowWriter{}
	b := newBatchedLog(w)
	defer b.Close()
	fmt.Fprintf(b, "one line\n")
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		w.mu.Lock()
		s := w.buf.String()
		w.mu.Unlock()
		if s == "one line\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a line written while idle did not reach the writer within 2 s (got %q)", s)
		}
	}
}

// countingWriter counts writes and takes no time over them, so that
// without a gap between writes every line would be one.
type countingWriter struct {
	mu     sync.Mutex
	lines  int
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	w.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// Lines that arrive one by one under load go out batchedLogGap's worth a
// write, even to a writer that is never busy.
func TestBatchedLogWritesSteadyLinesAGapAtATime(t *testing.T) {
	w := &countingWriter{}
	b := newBatchedLog(w)
	const span = 20 * batchedLogGap
	start := time.Now()
	n := 0
	for time.Since(start) < span {
		fmt.Fprintf(b, "{\"line\":%d}\n", n)
		n++
		time.Sleep(50 * time.Microsecond)
	}
	took := time.Since(start)
	b.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lines != n {
		t.Fatalf("%d lines written, want %d", w.lines, n)
	}
	if most := int(took/batchedLogGap) + 2; w.writes > most {
		t.Fatalf("%d lines over %v took %d writes; want at most %d, one a gap of %v", n, took, w.writes, most, batchedLogGap)
	}
}

// A line written after Close began goes after every line queued before
// it, even while the writer goroutine waits out batchedLogGap (found in
// review: it went straight to the writer, ahead of them).
func TestBatchedLogKeepsOrderAtClose(t *testing.T) {
	var mu sync.Mutex
	var got []string
	b := newBatchedLog(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(p))
		return len(p), nil
	}))
	b.Write([]byte("L0\n")) // written at once; the goroutine then waits the gap
	time.Sleep(2 * time.Millisecond)
	b.Write([]byte("L1\n")) // queued behind the wait
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	for {
		b.mu.Lock()
		c := b.closed
		b.mu.Unlock()
		if c {
			break
		}
		time.Sleep(10 * time.Microsecond)
	}
	b.Write([]byte("L2\n")) // after Close began
	<-closed
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "") != "L0\nL1\nL2\n" {
		t.Fatalf("writes %q; want L0, L1, L2 in that order", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestBatchedLogAnEmptyFlushKeepsTheBuffersApart: after a flush that
// found nothing (a wake-up whose lines an earlier flush took), the lines
// being written and the lines arriving meanwhile are still in two
// buffers. The empty flush used to hand the spare buffer to pending and
// keep it as the spare too, so the next flush wrote from the very array
// the next lines were appended to: a line being written was overwritten
// ("L2" became "XX") and the new line went out twice.
func TestBatchedLogAnEmptyFlushKeepsTheBuffersApart(t *testing.T) {
	var mu sync.Mutex
	var got []string
	entered, release := make(chan struct{}, 1), make(chan struct{})
	block := false
	b := &batchedLog{w: writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		blocking := block
		mu.Unlock()
		if blocking {
			entered <- struct{}{}
			<-release
		}
		mu.Lock()
		got = append(got, string(p))
		mu.Unlock()
		return len(p), nil
	}), wake: make(chan struct{}, 1)}
	b.space = sync.NewCond(&b.mu)
	// No run goroutine: the test calls flush itself, in the order that
	// leads to the empty flush.
	_, _ = b.Write([]byte("L0\n"))
	b.flush()
	_, _ = b.Write([]byte("L1\n"))
	b.flush()
	if b.flush() {
		t.Fatal("a flush with nothing pending reported lines")
	}
	_, _ = b.Write([]byte("L2\n"))
	mu.Lock()
	block = true
	mu.Unlock()
	done := make(chan struct{})
	go func() { b.flush(); close(done) }()
	<-entered // L2 is being written
	_, _ = b.Write([]byte("XX\n"))
	mu.Lock()
	block = false
	mu.Unlock()
	close(release)
	<-done
	b.flush()
	if all := strings.Join(got, ""); all != "L0\nL1\nL2\nXX\n" {
		t.Fatalf("the log holds %q, want %q", all, "L0\nL1\nL2\nXX\n")
	}
}
