package models

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Review finding: a purge that deleted its rows but stopped before its
// sweep left the refused hosts and messages no refusal names, and the
// next purge, finding no rows to delete, returned before sweeping them.
// The next purge of the same process now sweeps what the stopped one
// left, whether it stopped between full chunks or after its last one.
func TestAPurgeStoppedBeforeItsSweepIsSweptByTheNext(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		for _, oldRows := range []int{1, purgeChunk} {
			t.Run(fmt.Sprintf("%d old rows", oldRows), func(t *testing.T) {
				testAPurgeStoppedBeforeItsSweep(t, oldRows)
			})
		}
	})
}

// With one old row the purge stops after its last chunk, in the sweep;
// with a full chunk of them, in the pause before the next chunk.
func testAPurgeStoppedBeforeItsSweep(t *testing.T, oldRows int) {
	s := openTestStore(t)
	ctx := testCtx(t)
	old := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	rows := []Refusal{{Time: old.Add(time.Hour), URL: "https://kept.example/", Host: "kept.example", Message: "Refused: kept"}}
	for i := range oldRows {
		rows = append(rows, Refusal{Time: old.Add(time.Duration(i) * time.Millisecond), URL: "https://gone.example/", Host: "gone.example", Message: "Refused: gone for good"})
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(ctx)
	purgeUnlocked = cancel // after the first chunk
	t.Cleanup(func() { purgeUnlocked = nil })
	n, err := s.PurgeRefusalsBefore(stop, old.Add(time.Minute))
	if n != int64(oldRows) || !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped purge: %d rows, %v; want %d rows and the cancellation", n, err, oldRows)
	}
	purgeUnlocked = nil
	if hosts := s.refusedHostsForTest(t); len(hosts) != 2 {
		t.Fatalf("after the stopped purge the refused hosts are %q; the test needs the sweep not to have run", hosts)
	}
	n, err = s.PurgeRefusalsBefore(ctx, old.Add(time.Minute))
	if n != 0 || err != nil {
		t.Fatalf("the next purge: %d rows, %v; want none to delete", n, err)
	}
	if hosts := s.refusedHostsForTest(t); len(hosts) != 1 || hosts[0] != "kept.example" {
		t.Errorf("after the next purge the refused hosts are %q, want only kept.example", hosts)
	}
	if s.engine == enginePostgres {
		var texts []string
		if err := s.r.Raw("SELECT text FROM refusal_messages ORDER BY text").Scan(&texts).Error; err != nil {
			t.Fatal(err)
		}
		if len(texts) != 1 || texts[0] != "refused: kept" {
			t.Errorf("after the next purge the stored messages are %q, want only the kept one", texts)
		}
	}
	// Swept: a third purge with nothing to delete has nothing to do.
	if owed, swept := s.sweepsOwed.Load(), s.sweptUpTo.Load(); owed != swept {
		t.Errorf("after the sweep %d chunks are owed a sweep and %d swept", owed, swept)
	}
}

// Review finding: the sweep of unused keys began after the key's zero
// value, so the empty host (refusals of a malformed URL name none) stayed
// in the refused-host list after its last refusal was purged.
func TestThePurgeSweepsTheEmptyHostWithItsLastRefusal(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		old := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
		if err := s.InsertRefusals(ctx, []Refusal{
			{Time: old, Host: ""},
			{Time: old, Host: "gone.example"},
			{Time: old.Add(48 * time.Hour), Host: "kept.example"},
		}); err != nil {
			t.Fatal(err)
		}
		if hosts := s.refusedHostsForTest(t); len(hosts) != 3 || hosts[0] != "" {
			t.Fatalf("before the purge the refused hosts are %q; the test needs the empty host listed", hosts)
		}
		if _, err := s.PurgeRefusalsBefore(ctx, old.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if hosts := s.refusedHostsForTest(t); len(hosts) != 1 || hosts[0] != "kept.example" {
			t.Errorf("after the purge the refused hosts are %q, want only kept.example", hosts)
		}
	})
}
