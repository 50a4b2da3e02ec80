package guard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// BenchmarkProxyAllowed measures the proxy's allowed path, an
// absolute-URI GET forwarded to a loopback server, beside a bare forward
// proxy that checks and records nothing, in one process and one run: the
// difference in allocs/op and ns/op is the guard's own work per request
// (authentication, the decision, the watchdog, the connect-time check's
// permit, the Record). The client and the server are the same for both,
// so their allocations cancel out. The Recorder only counts, so the cost
// of a sink's log line is not in these figures (the console's is in
// cmd/console's BenchmarkStandaloneProxy).
func BenchmarkProxyAllowed(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		body := strings.Repeat("x", size)
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, body)
		}))
		b.Cleanup(server.Close)
		target := server.URL + "/page"

		bare := httptest.NewServer(guardtest.BareForwardProxy(&http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}))
		b.Cleanup(bare.Close)

		var records atomic.Int64
		p, err := NewPolicy([]Entry{mustEntry(b, strings.TrimPrefix(server.URL, "http://"))}, DefaultSettings())
		if err != nil {
			b.Fatal(err)
		}
		g := New(Options{Policy: p, Recorder: RecorderFunc(func(Record) { records.Add(1) })})
		b.Cleanup(g.Close)
		caller := Caller{Tool: "proxy", Agent: "bench"}
		proxy, err := g.NewProxy(ProxyOptions{Authenticate: func(_ context.Context, _, pass string) (Caller, error) {
			if pass != "secret" {
				return Caller{}, ErrProxyCredential
			}
			return caller, nil
		}})
		if err != nil {
			b.Fatal(err)
		}
		guarded := httptest.NewServer(proxy)
		b.Cleanup(guarded.Close)

		b.Run(fmt.Sprintf("%dKB/bare", size>>10), func(b *testing.B) {
			benchThrough(b, target, &url.URL{Scheme: "http", Host: bare.Listener.Addr().String()})
		})
		b.Run(fmt.Sprintf("%dKB/guarded", size>>10), func(b *testing.B) {
			before := records.Load()
			benchThrough(b, target, &url.URL{Scheme: "http", Host: guarded.Listener.Addr().String(), User: url.UserPassword("agent", "secret")})
			if got := records.Load() - before; got < int64(b.N) {
				b.Fatalf("%d records for %d requests: every allowed request has one", got, b.N)
			}
		})
	}
}

// benchThrough sends b.N GETs of target through proxy from 8 keep-alive
// clients.
func benchThrough(b *testing.B, target string, proxy *url.URL) {
	tr := &http.Transport{Proxy: http.ProxyURL(proxy), MaxIdleConnsPerHost: 8}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	b.ReportAllocs()
	cpu, user := processCPU()
	b.ResetTimer()
	_, err := guardtest.Load(8, func() bool { return next.Add(1) <= int64(b.N) }, func() (*http.Response, error) { return client.Get(target) })
	b.StopTimer()
	if err != nil {
		b.Fatalf("a request failed: %v", err)
	}
	// CPU per request of the whole process (clients, server, proxy): on a
	// machine shared with other work, ns/op swings with the load while
	// this does not.
	cpu2, user2 := processCPU()
	b.ReportMetric(float64(cpu2-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(user2-user)/float64(time.Microsecond)/float64(b.N), "user-µs/op")
}

// processCPU is the CPU time the process has used, user and system
// together and user alone (the kernel's share is the sockets', the same
// for both proxies).
func processCPU() (all, user time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Utime.Nano())
}
