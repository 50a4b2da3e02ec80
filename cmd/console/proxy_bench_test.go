package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// proxyBenchClients is how many keep-alive clients send at once.
const proxyBenchClients = 64

// BenchmarkStandaloneProxy measures requests per second from 64
// concurrent keep-alive clients to one loopback server, in one run on the
// same server and load, for 4 KB and 64 KB answers: directly, through a
// minimal unguarded Go forward proxy, and through `console proxy` (token
// authentication over the store, the decision, the connect-time check, the
// per-decision log line, written to a file). Both proxies pool 64 idle
// connections per host, so they differ only in the guard's work. Target:
// guarded ≥ 0.9 × minimal at both sizes. guarded stores every allowed
// decision of a ticket (the decisions store, for tickets' timelines) and
// guarded-no-decisions does not: target guarded ≥ 0.9 × guarded-no-decisions.
// guarded-untagged sends the floor test's requests (no ticket), for
// comparing allocs/op and profiles with minimal.
func BenchmarkStandaloneProxy(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) { benchProxySize(b, size) })
	}
}

func benchProxySize(b *testing.B, size int) {
	body := strings.Repeat("x", size)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, body)
	}))
	defer server.Close()
	target := server.URL + "/page"

	minimal := httptest.NewServer(minimalProxy(&http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}))
	defer minimal.Close()

	db := tempDB(b)
	ctx := context.Background()
	logFile, err := os.Create(filepath.Join(b.TempDir(), "decisions.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	decisionLog := newBatchedLog(logFile) // as console proxy writes it
	defer decisionLog.Close()
	a, err := app.Open(ctx, db, app.Options{Log: jsonLog(decisionLog), DecisionLog: decisionLog})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	// The server is on loopback, which only a literal entry unlocks.
	if _, err := a.Store().AddAllowlistEntries(ctx, models.AnyRevision, []models.AllowlistEntry{{Entry: strings.TrimPrefix(server.URL, "http://"), CreatedAt: time.Now()}}); err != nil {
		b.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		b.Fatal(err)
	}
	token, _ := tools.NewToken()
	if _, err := a.Store().CreateToken(ctx, "bench", tools.HashToken(token)); err != nil {
		b.Fatal(err)
	}
	proxy, err := standaloneProxy(a)
	if err != nil {
		b.Fatal(err)
	}
	guarded := httptest.NewServer(proxy)
	defer guarded.Close()

	b.Run("direct", func(b *testing.B) { runProxyBench(b, target, nil, "") })
	b.Run("minimal", func(b *testing.B) {
		runProxyBench(b, target, &url.URL{Scheme: "http", Host: minimal.Listener.Addr().String()}, "")
	})
	through := &url.URL{Scheme: "http", Host: guarded.Listener.Addr().String(), User: url.UserPassword("agent", token)}
	// Every request names a ticket (X-Outbound-Ticket), so each allowed
	// one is a row of the decisions store when it is on (the default):
	// storing them for tickets' timelines must cost at most 10% of the
	// same requests with the store off.
	decisions := func(days string) {
		if _, err := a.SetSettings(ctx, app.SetSettings{Actor: "bench", Version: models.AnyRevision, Values: map[string]string{"decision_retention_days": days}}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("guarded", func(b *testing.B) {
		decisions("7")
		runProxyBench(b, target, through, "SUP-4521")
	})
	b.Run("guarded-no-decisions", func(b *testing.B) {
		decisions("0")
		runProxyBench(b, target, through, "SUP-4521")
	})
	// The requests of TestProxyFloor: no ticket, so no decision row.
	b.Run("guarded-untagged", func(b *testing.B) { runProxyBench(b, target, through, "") })
}

// minimalProxy is the baseline: an unguarded forward proxy that sends
// absolute-URI requests on with one shared transport and copies the
// answer back, checking nothing.
func minimalProxy(tr *http.Transport) http.Handler { return guardtest.BareForwardProxy(tr) }

// runProxyBench sends b.N GETs of target from proxyBenchClients clients
// that share one keep-alive transport, through proxy when it is set, with
// ticket as X-Outbound-Ticket when it is set.
func runProxyBench(b *testing.B, target string, proxy *url.URL, ticket string) {
	tr := &http.Transport{MaxIdleConnsPerHost: proxyBenchClients}
	if proxy != nil {
		tr.Proxy = http.ProxyURL(proxy)
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	b.ReportAllocs()
	cpu := processCPU()
	b.ResetTimer()
	_, err := guardtest.Load(proxyBenchClients, func() bool { return next.Add(1) <= int64(b.N) }, func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodGet, target, nil)
		if ticket != "" {
			req.Header.Set("X-Outbound-Ticket", ticket)
		}
		return client.Do(req)
	})
	b.StopTimer()
	if err != nil {
		b.Fatalf("a request failed: %v", err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	// CPU per request, clients and server together, including the rows
	// written in the background after the last request (the writers flush
	// every 150 ms): on a machine shared with other work, req/s swings
	// with the load while this does not.
	time.Sleep(400 * time.Millisecond)
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
