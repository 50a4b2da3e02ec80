package models

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Found in review: only a Write started spilling when the database
// stalled, so in a quiet stall the rows acknowledged before it (the batch
// in flight, the queue) stayed in memory however long it lasted, and a
// kill -9 lost them. Now they are in the spill file once StallAfter has
// passed, with no Write needed, and the next writer on the file writes
// them.
func TestAQuietStallSpills(t *testing.T) {
	s := openTestStore(t)
	sink := &stalledSink{store: s, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	defer close(sink.release)
	spill := filepath.Join(t.TempDir(), "o.db.refusals.spill")
	var logged lockedLines
	w := newRefusalWriter(sink, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 10,
		StallAfter: 20 * time.Millisecond, SpillPath: spill,
		Name: "refusal log", Log: slog.New(slog.NewTextHandler(&logged, nil))})
	const n = 10
	for i := range n {
		w.Write(Refusal{Host: fmt.Sprintf("h%d", i)})
	}
	<-sink.entered
	time.Sleep(200 * time.Millisecond) // no Write: a quiet stall
	if st := w.Stats(); st.SpillRows != n || st.NotWritten() != n {
		t.Fatalf("200 ms into a stall of 20: %+v; want all %d rows in the spill file", st, n)
	}
	if got := logged.String(); !strings.Contains(got, "refusal log: database stalled; spilling rows to disk") {
		t.Fatalf("the stall was not logged:\n%s", got)
	}
	// "kill -9", as in TestSpillSurvivesAKilledProcess.
	w.mu.Lock()
	f := w.spill.f
	w.mu.Unlock()
	_ = f.Close()

	next := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, SpillPath: spill})
	closeWriter(t, next)
	wantHosts(t, s, n)
}
