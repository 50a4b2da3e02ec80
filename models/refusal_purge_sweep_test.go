package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Review finding: a purge that deleted its rows but stopped before its
// sweep left the refused hosts and messages no refusal names, and the
// next purge, finding no rows to delete, returned before sweeping them.
// The next purge now sweeps what the stopped one left, whether it stopped
// between full chunks or after its last one, and whether its rows were of
// the cutoff's day or of the days before it.
func TestAPurgeStoppedBeforeItsSweepIsSweptByTheNext(t *testing.T) {
	eachEngine(t, func(t *testing.T) { eachStoppedPurge(t, false) })
}

// Review finding: that debt was remembered in the process's memory only,
// so after a restart (shutdown cancels the purge), or on another replica,
// the next purge found no rows, skipped the sweep, and left the refused
// hosts, and the host counters of the purged days, for good.
func TestAPurgeStoppedBeforeItsSweepIsSweptAfterARestart(t *testing.T) {
	eachEngine(t, func(t *testing.T) { eachStoppedPurge(t, true) })
}

func eachStoppedPurge(t *testing.T, restart bool) {
	for _, oldRows := range []int{1, purgeChunk} {
		for _, after := range []time.Duration{time.Minute, 25 * time.Hour} {
			t.Run(fmt.Sprintf("%d old rows, cutoff %v after them", oldRows, after), func(t *testing.T) {
				testAPurgeStoppedBeforeItsSweep(t, oldRows, after, restart)
			})
		}
	}
}

// With one old row the purge stops after its last chunk, in the sweep;
// with a full chunk of them, in the pause before the next chunk. A
// cutoff a minute after them is of their day, whose host counters the
// chunks take the rows from; one a day later leaves those of the rows'
// day to the sweep. With restart, the next purge is another process's.
func testAPurgeStoppedBeforeItsSweep(t *testing.T, oldRows int, after time.Duration, restart bool) {
	target := testTarget(t)
	open := func() *Store {
		s, err := Open(target)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open()
	ctx := testCtx(t)
	old := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	cutoff := old.Add(after)
	rows := []Refusal{{Time: old.Add(72 * time.Hour), URL: "https://kept.example/", Host: "kept.example", Message: "Refused: kept"}}
	for i := range oldRows {
		rows = append(rows, Refusal{Time: old.Add(time.Duration(i) * time.Millisecond), URL: "https://gone.example/", Host: "gone.example", Message: "Refused: gone for good"})
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(ctx)
	purgeUnlocked = cancel // after the first chunk
	t.Cleanup(func() { purgeUnlocked = nil })
	n, err := s.PurgeRefusalsBefore(stop, cutoff)
	if n != int64(oldRows) || !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped purge: %d rows, %v; want %d rows and the cancellation", n, err, oldRows)
	}
	purgeUnlocked = nil
	if hosts := s.refusedHostsForTest(t); len(hosts) != 2 {
		t.Fatalf("after the stopped purge the refused hosts are %q; the test needs the sweep not to have run", hosts)
	}
	if restart {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = open()
	}
	n, err = s.PurgeRefusalsBefore(ctx, cutoff)
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
	wantCountersOfTheRows(t, s, "after the next purge", true)
	var left []string
	if err := s.r.Raw("SELECT dim || ' ' || value FROM refusal_counts WHERE period < ? ORDER BY 1", utcDay(old.Add(72*time.Hour))).Scan(&left).Error; err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("after the next purge counters of the purged days are left: %q", left)
	}
	// Swept: a third purge with nothing to delete has nothing to do.
	if owed, err := s.sweepOwed(ctx, cutoff); owed || err != nil {
		t.Errorf("after the sweep a sweep is still owed: %v, %v", owed, err)
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

// The purge looks for a sweep owed every hour, on logs of ten million
// rows: it must read the counters at or before the cutoff's hour through
// the primary key, not every counter of the retention's days.
func TestLookingForASweepOwedReadsTheCountersKey(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		base := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
		var rows []Refusal
		for i := range 6000 { // 41 days, 97 hosts
			rows = append(rows, Refusal{Time: base.Add(time.Duration(i) * 10 * time.Minute), Host: fmt.Sprintf("h%d.example", i%97), Agent: fmt.Sprintf("a%d", i%5), Tool: "fetch_url", Reason: "not_allowlisted"})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		cutoff := base.Add(10*24*time.Hour + 90*time.Minute)
		if _, err := s.PurgeRefusalsBefore(ctx, cutoff); err != nil {
			t.Fatal(err)
		}
		if owed, err := s.sweepOwed(ctx, cutoff); owed || err != nil {
			t.Fatalf("after a whole purge a sweep is owed: %v, %v", owed, err)
		}
		probe := "SELECT 1 FROM refusal_counts WHERE " + emptyCounters + " LIMIT 1"
		args := []any{hourOf(cutoff), dimHost, utcDay(cutoff)}
		var plan string
		if s.engine == enginePostgres {
			if err := s.w.Exec("ANALYZE refusal_counts").Error; err != nil {
				t.Fatal(err)
			}
			var lines []string
			if err := s.r.Raw("EXPLAIN "+probe, args...).Scan(&lines).Error; err != nil {
				t.Fatal(err)
			}
			plan = strings.Join(lines, "\n")
			if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "refusal_counts_pkey") {
				t.Errorf("the probe for a sweep owed reads every counter:\n%s", plan)
			}
			return
		}
		var steps []struct{ Detail string }
		if err := s.r.Raw("EXPLAIN QUERY PLAN "+probe, args...).Scan(&steps).Error; err != nil {
			t.Fatal(err)
		}
		plan = fmt.Sprint(steps)
		if !strings.Contains(plan, "SEARCH refusal_counts USING INDEX") || !strings.Contains(plan, "period<?") {
			t.Errorf("the probe for a sweep owed reads every counter: %s", plan)
		}
	})
}
