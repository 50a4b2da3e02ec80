package models

import (
	"testing"
	"time"
)

// The queue gives rows back in the order they came, a block of at most
// queueBlockRows at a time, and a block it gave away is the caller's:
// rows pushed after it never land in it.
func TestRowQueueKeepsOrderInBlocks(t *testing.T) {
	var q rowQueue[int]
	next, want := 0, 0
	take := func() []int {
		rows := q.take()
		if len(rows) > queueBlockRows {
			t.Fatalf("a block of %d rows, over %d", len(rows), queueBlockRows)
		}
		if q.bytes != int64(q.len()) { // every row pushed as 1 byte
			t.Fatalf("the queue counts %d bytes for %d rows of 1 byte", q.bytes, q.len())
		}
		for _, r := range rows {
			if r != want {
				t.Fatalf("row %d came back as %d", want, r)
			}
			want++
		}
		return rows
	}
	for _, n := range []int{1, 3, queueBlockRows - 1, queueBlockRows, queueBlockRows + 1, 3*queueBlockRows + 17} {
		for range n {
			q.push(next, 1)
			next++
		}
		if q.len() != n {
			t.Fatalf("after %d pushes the queue holds %d", n, q.len())
		}
		first := take()
		if len(first) != min(n, queueBlockRows) {
			t.Fatalf("the first block of %d rows holds %d, want %d", n, len(first), min(n, queueBlockRows))
		}
		if cap(first) != len(first) {
			t.Fatalf("a taken block of %d rows has room for %d: an append to it could share memory", len(first), cap(first))
		}
		if q.len() > 0 {
			// The caller owns the block: appending to it must not
			// change the rows still queued.
			head := q.blocks[0].rows[0]
			_ = append(first, -1)
			if q.blocks[0].rows[0] != head {
				t.Fatal("appending to a taken block changed the queue")
			}
		}
		q.push(next, 1)
		next++
		for q.len() > 0 {
			take()
		}
		if q.take() != nil {
			t.Fatal("an empty queue gave a block")
		}
	}
	q.push(next, 1)
	if all := q.all(); len(all) != 1 || all[0] != next {
		t.Fatalf("all() = %v", all)
	}
	q.reset()
	if q.len() != 0 || q.all() != nil {
		t.Fatal("reset left rows")
	}
}

// Every kind of row the store logs is prepared (stamped, capped, sized)
// on its way into the queue: prepareRow knows each by name, so a kind
// it does not know would go uncapped.
func TestEveryLoggedRowKindIsPrepared(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	long := string(make([]byte, 1<<20))
	r := Refusal{URL: "http://x.example/" + long}
	if rowKindOf[Refusal]() == otherRow || prepareRow(rowKindOf[Refusal](), &r, now) <= 0 || len(r.URL) >= 1<<20 || !r.Time.Equal(now) {
		t.Fatalf("a refusal was not prepared: %d-byte URL, time %v", len(r.URL), r.Time)
	}
	d := Decision{URL: "http://x.example/" + long}
	if rowKindOf[Decision]() == otherRow || prepareRow(rowKindOf[Decision](), &d, now) <= 0 || len(d.URL) >= 1<<20 || !d.Time.Equal(now) {
		t.Fatalf("a decision was not prepared: %d-byte URL, time %v", len(d.URL), d.Time)
	}
	w := WouldRefusal{URL: "http://x.example/" + long}
	if rowKindOf[WouldRefusal]() == otherRow || prepareRow(rowKindOf[WouldRefusal](), &w, now) <= 0 || len(w.URL) >= 1<<20 || !w.Time.Equal(now) {
		t.Fatalf("a would-refusal was not prepared: %d-byte URL, time %v", len(w.URL), w.Time)
	}
	if got := prepareRow(rowKindOf[int](), new(int), now); got != defaultRowBytes {
		t.Fatalf("another row counts %d bytes, want %d", got, defaultRowBytes)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a row that caps itself, unknown to prepareRow, did not panic")
		}
	}()
	rowKindOf[selfCapping]()
}

type selfCapping struct{}

func (*selfCapping) capStrings()        {}
func (*selfCapping) approxBytes() int64 { return 1 }
