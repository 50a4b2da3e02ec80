package models

import (
	"context"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/pgtest"
)

// watchChanges runs s.Watch with interval until the test ends and returns
// the channel of the revisions it reports.
func watchChanges(t *testing.T, s *Store, interval time.Duration) <-chan int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan int64, 100)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = s.Watch(ctx, interval, func(rev int64) error { changes <- rev; return nil })
	}()
	t.Cleanup(func() { cancel(); <-stopped })
	return changes
}

// twoReplicas opens two stores on one new PostgreSQL schema, as two
// replicas would, closed when the test ends.
func twoReplicas(t *testing.T) (dsn string, watcher, other *Store) {
	t.Helper()
	dsn = pgtest.Schema(t)
	stores := make([]*Store, 2)
	for i := range stores {
		s, err := Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	return dsn, stores[0], stores[1]
}

// waitListening waits until s's Watch holds its LISTEN connection.
func waitListening(t *testing.T, s *Store, want bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Listening() != want {
		if time.Now().After(deadline) {
			t.Fatalf("Listening() stayed %v for 10s, want %v", !want, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReplicaSeesChangeWithin100ms: two stores on one PostgreSQL database
// (two replicas). With polling slowed to an hour, only the notification
// can deliver the change; it must arrive within the 100 ms bound. Then the
// listening connection is killed from the server side: polling carries
// the next change, and the listener comes back by itself.
func TestReplicaSeesChangeWithin100ms(t *testing.T) {
	dsn, watcher, other := twoReplicas(t)
	ctx := testCtx(t)

	changes := watchChanges(t, watcher, time.Hour)
	waitListening(t, watcher, true)
	var worst time.Duration
	for i := 1; i <= 5; i++ {
		start := time.Now()
		if _, err := other.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "h" + string(rune('a'+i)) + ".example.com"}}); err != nil {
			t.Fatal(err)
		}
		select {
		case rev := <-changes:
			lag := time.Since(start)
			worst = max(worst, lag)
			if rev != int64(i) {
				t.Fatalf("change %d: Watch reported revision %d", i, rev)
			}
		case <-time.After(time.Second):
			t.Fatalf("change %d: no notification within 1s (polling is hourly here)", i)
		}
	}
	t.Logf("notification lag, worst of 5 (commit included): %v", worst)
	if worst > 100*time.Millisecond {
		t.Errorf("a replica saw a change after %v, want at most 100ms", worst)
	}

	// Lose the connection: kill every backend LISTENing on the channel.
	pgtest.Exec(t, dsn, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN "+notifyChannel+"%' AND pid <> pg_backend_pid()")
	waitListening(t, watcher, false)
	waitListening(t, watcher, true) // back after listenRetry
	if _, err := other.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "after.example.com"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case rev := <-changes:
		if rev != 6 {
			t.Fatalf("after reconnecting, Watch reported revision %d, want 6", rev)
		}
	case <-time.After(time.Second):
		t.Fatal("no notification within 1s after the listener reconnected")
	}
}

// TestPollingCarriesChangesWithoutNotifications: a change that sends no
// notification still reaches a PostgreSQL replica, by polling, within the
// poll interval.
func TestPollingCarriesChangesWithoutNotifications(t *testing.T) {
	_, watcher, other := twoReplicas(t)
	// A change whose transaction sends no notification, as from a replica
	// of an older release or one whose NOTIFY was lost.
	changes := watchChanges(t, watcher, 100*time.Millisecond)
	waitListening(t, watcher, true)
	if err := other.w.Exec("UPDATE revision SET value = value + 1 WHERE id = 1").Error; err != nil {
		t.Fatal(err)
	}
	select {
	case rev := <-changes:
		if rev != 1 {
			t.Fatalf("Watch reported revision %d, want 1", rev)
		}
	case <-time.After(time.Second):
		t.Fatal("polling did not deliver a change within 1s")
	}
}
