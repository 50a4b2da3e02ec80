package models

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMoveSpillHandsARenamedFileToTheNextWriter: rows a killed process
// left in a spill file under an old name are replayed by the writer of
// the new name, once; a file a live process holds stays where it is.
func TestMoveSpillHandsARenamedFileToTheNextWriter(t *testing.T) {
	s := openTestStore(t)
	dir := t.TempDir()
	from, to := filepath.Join(dir, "old.refusals.spill"), filepath.Join(dir, "new.refusals.spill")
	live, err := openSpill(from) // a process, alive, on the old name
	if err != nil {
		t.Fatal(err)
	}
	defer live.f.Close()
	if err := spillAppend(live, Refusal{Host: "live"}); err != nil {
		t.Fatal(err)
	}
	left, err := openSpill(from) // another, killed with rows in its file
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]Refusal, 10)
	for i := range rows {
		rows[i] = Refusal{Host: fmt.Sprintf("h%d", i)}
	}
	if err := spillAppend(left, rows...); err != nil {
		t.Fatal(err)
	}
	_ = left.f.Close() // killed here

	if err := MoveSpill(from, to); err != nil {
		t.Fatal(err)
	}
	if err := MoveSpill(from, to); err != nil { // again: nothing left to move
		t.Fatal(err)
	}
	if st, err := os.Stat(left.path); err != nil || st.Size() != 0 {
		t.Fatalf("the killed process's old file after the move: %v, %v; want it emptied", st, err)
	}
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, SpillPath: to})
	closeWriter(t, w)
	wantHosts(t, s, 10)
	if live.pending() == 0 {
		t.Fatal("the live process's file was moved from under it")
	}
}
