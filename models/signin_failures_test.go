package models

import (
	"testing"
	"time"
)

// TestReserveSignInCountsOnTheDatabasesClock: the failures' times, their
// window and the time admit is given are the database's clock, whatever
// clock the caller passes: PostgreSQL's own, and on SQLite (a file on
// this machine) the process's, which the caller passes. A failure stored
// by a caller whose clock runs behind counts for one whose clock runs
// ahead.
func TestReserveSignInCountsOnTheDatabasesClock(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		keys := []ThrottleKey{{Kind: "account", Key: "ada", Window: time.Minute, Keep: 10}}
		local := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
		reserve := func(local time.Time) (now time.Time, recent []time.Time) {
			t.Helper()
			ids, err := s.ReserveSignIn(ctx, keys, local, func(n time.Time, r [][]time.Time) bool {
				now, recent = n, r[0]
				return true
			})
			if err != nil || len(ids) != 1 {
				t.Fatalf("ReserveSignIn = %v, %v; want one ID", ids, err)
			}
			return now, recent
		}
		first, _ := reserve(local)
		if testOnPostgres(t) {
			if d := time.Since(first); d < -5*time.Second || d > 5*time.Second {
				t.Fatalf("on PostgreSQL admit was given %s, %s from the server's clock (the caller's: %s)", first, d, local)
			}
		} else if !first.Equal(local) {
			t.Fatalf("on SQLite admit was given %s, want the caller's clock %s", first, local)
		}
		// A caller 90 s ahead, more than the window: on PostgreSQL the
		// first failure is still in it; on SQLite the caller's clock is
		// the database's, and it has moved on past the window.
		second, recent := reserve(local.Add(90 * time.Second))
		if testOnPostgres(t) {
			if len(recent) != 1 || !recent[0].Equal(first) || second.Before(first) {
				t.Fatalf("on PostgreSQL a caller 90 s ahead read %v at %s, want the failure at %s", recent, second, first)
			}
		} else if len(recent) != 0 || !second.Equal(local.Add(90*time.Second)) {
			t.Fatalf("on SQLite 90 s later read %v at %s, want nothing left in the window", recent, second)
		}
	})
}
