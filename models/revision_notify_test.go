package models

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

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

// TestListenerReplacesAHalfOpenConnection: the LISTEN connection passes a
// proxy that stops carrying its bytes both ways without closing it, as a
// NAT gateway that forgot the connection does. With polling slowed to an
// hour, the change made meanwhile arrives only once the listener has
// noticed (a quiet connection is pinged), dropped it and listened again.
func TestListenerReplacesAHalfOpenConnection(t *testing.T) {
	_, watcher, other := twoReplicas(t)
	ctx := testCtx(t)
	oldCheck, oldPing := listenCheck, listenPingTimeout
	listenCheck, listenPingTimeout = 300*time.Millisecond, 300*time.Millisecond
	t.Cleanup(func() { listenCheck, listenPingTimeout = oldCheck, oldPing })
	proxy := newStallingProxy(t, watcher.dsn)
	watcher.dsn = proxy.dsn // the listener's connection only; the pool's are direct

	changes := watchChanges(t, watcher, time.Hour)
	waitListening(t, watcher, true)
	add := func(host string) time.Time {
		t.Helper()
		if _, err := other.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: host}}); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	add("before.example.com")
	select {
	case <-changes:
	case <-time.After(time.Second):
		t.Fatal("no notification within 1s through the proxy")
	}

	proxy.stall() // the connection open now goes silent, both ways
	start := add("during.example.com")
	select {
	case rev := <-changes:
		if rev != 2 {
			t.Fatalf("Watch reported revision %d, want 2", rev)
		}
		t.Logf("the change made on a half-open connection arrived after %v", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("the change made while the listener's connection was half-open did not arrive within 5s (polling is hourly here)")
	}
	waitListening(t, watcher, true)
	if n := proxy.conns(); n < 2 {
		t.Errorf("the listener made %d connection(s) through the proxy, want a second one", n)
	}
}

// stallingProxy forwards TCP connections to a PostgreSQL server (by its
// unix socket or address); stall makes every connection open at the time
// stop carrying bytes either way while staying open (half-open), and
// later connections are carried as usual.
type stallingProxy struct {
	dsn     string
	mu      sync.Mutex
	stalled []*atomic.Bool
	made    int
}

func newStallingProxy(t *testing.T, dsn string) *stallingProxy {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	network, address := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		network, address = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var open []net.Conn
	var openMu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		openMu.Lock()
		defer openMu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("host", "127.0.0.1")
	q.Set("port", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	u.Host, u.RawQuery = "", q.Encode()
	p := &stallingProxy{dsn: u.String()}
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial(network, address)
			if err != nil {
				client.Close()
				continue
			}
			stalled := &atomic.Bool{}
			p.mu.Lock()
			p.stalled = append(p.stalled, stalled)
			p.made++
			p.mu.Unlock()
			openMu.Lock()
			open = append(open, client, server)
			openMu.Unlock()
			carry := func(dst, src net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					if err != nil {
						return
					}
					if !stalled.Load() {
						if _, err := dst.Write(buf[:n]); err != nil {
							return
						}
					}
				}
			}
			go carry(server, client)
			go carry(client, server)
		}
	}()
	return p
}

func (p *stallingProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stalled {
		s.Store(true)
	}
}

func (p *stallingProxy) conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.made
}
