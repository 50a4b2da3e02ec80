package models

import (
	"strings"
	"testing"
	"time"
)

// TestWebReadsAreSharedByReplicas: a conversation marked through one
// store is read through another on the same database; a later expiry
// wins over an earlier one whichever is written last (also within one
// second, where SQLite compares stored text); conversations are told
// apart by their whole name, however long; and a purge deletes exactly
// the expired marks.
func TestWebReadsAreSharedByReplicas(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		target := testTarget(t)
		a, err := Open(target)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := Open(target)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		ctx := testCtx(t)
		base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

		if until, err := b.WebReadUntil(ctx, "T-1"); err != nil || !until.IsZero() {
			t.Fatalf("an unmarked conversation: %v, %v; want the zero time", until, err)
		}
		if err := a.MarkWebRead(ctx, "T-1", base.Add(500*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		until, err := b.WebReadUntil(ctx, "T-1")
		if err != nil || !until.Equal(base.Add(500*time.Millisecond)) {
			t.Fatalf("T-1 marked on a, read on b: %v, %v", until, err)
		}
		// An earlier expiry, written later (a replica with an older
		// mark), does not shorten it; a later one extends it.
		for _, earlier := range []time.Time{base, base.Add(120 * time.Millisecond), base.Add(-time.Hour)} {
			if err := b.MarkWebRead(ctx, "T-1", earlier); err != nil {
				t.Fatal(err)
			}
		}
		if until, _ := a.WebReadUntil(ctx, "T-1"); !until.Equal(base.Add(500 * time.Millisecond)) {
			t.Fatalf("an earlier expiry replaced a later one: %v", until)
		}
		if err := b.MarkWebRead(ctx, "T-1", base.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if until, _ := a.WebReadUntil(ctx, "T-1"); !until.Equal(base.Add(time.Second)) {
			t.Fatalf("a later expiry was not kept: %v", until)
		}

		long := strings.Repeat("x", 1<<20)
		if err := a.MarkWebRead(ctx, long, base.Add(time.Hour)); err != nil {
			t.Fatalf("a conversation with a 1 MiB name: %v", err)
		}
		for thread, want := range map[string]time.Time{long: base.Add(time.Hour), long[1:]: {}, "T-2": {}, "t-1": {}} {
			if until, err := b.WebReadUntil(ctx, thread); err != nil || !until.Equal(want) {
				t.Errorf("conversation %.8q… (%d bytes): %v, %v; want %v", thread, len(thread), until, err, want)
			}
		}

		n, err := b.PurgeWebReads(ctx, base.Add(time.Minute))
		if err != nil || n != 1 {
			t.Fatalf("purge: %d, %v; want T-1's expired mark deleted", n, err)
		}
		if until, _ := a.WebReadUntil(ctx, "T-1"); !until.IsZero() {
			t.Fatalf("T-1 is still stored after the purge: %v", until)
		}
		if until, _ := a.WebReadUntil(ctx, long); !until.Equal(base.Add(time.Hour)) {
			t.Fatalf("the purge deleted a live mark: %v", until)
		}
	})
}

// TestWebReadsMigrationUpgradesADatabase: a database at version 19 gets
// the table on its next open, once.
func TestWebReadsMigrationUpgradesADatabase(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		target := testTarget(t)
		s, err := Open(target)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{"DROP TABLE web_reads", "DELETE FROM schema_migrations WHERE version >= 20"} {
			if err := s.w.Exec(stmt).Error; err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		s.Close()
		st, err := PendingMigrations(testCtx(t), target)
		if err != nil || len(st.Pending) != LatestSchemaVersion()-19 || !strings.HasPrefix(st.Pending[0], "20: ") {
			t.Fatalf("pending at version 19: %+v, %v", st, err)
		}
		s, err = Open(target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if got := appliedVersions(t, s); len(got) != LatestSchemaVersion() {
			t.Fatalf("applied %v, want each of 1…%d once", got, LatestSchemaVersion())
		}
		until := time.Now().Add(time.Hour).UTC()
		if err := s.MarkWebRead(testCtx(t), "T-1", until); err != nil {
			t.Fatal(err)
		}
		if got, err := s.WebReadUntil(testCtx(t), "T-1"); err != nil || !got.Equal(until.Truncate(time.Microsecond)) && !got.Equal(until) {
			t.Fatalf("after the upgrade: %v, %v", got, err)
		}
	})
}
