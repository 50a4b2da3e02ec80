package guard

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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

		bare := httptest.NewServer(bareForwardProxy(&http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}))
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

// bareForwardProxy is the floor: it sends absolute-URI requests on with
// one shared transport and copies the answer back, checking nothing.
func bareForwardProxy(tr *http.Transport) http.Handler {
	buffers := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.WithContext(r.Context())
		out.RequestURI = ""
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := buffers.Get().(*[]byte)
		_, _ = io.CopyBuffer(struct{ io.Writer }{w}, resp.Body, *buf)
		buffers.Put(buf)
	})
}

// benchThrough sends b.N GETs of target through proxy from 8 keep-alive
// clients.
func benchThrough(b *testing.B, target string, proxy *url.URL) {
	tr := &http.Transport{Proxy: http.ProxyURL(proxy), MaxIdleConnsPerHost: 8}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ReportAllocs()
	cpu, user := processCPU()
	b.ResetTimer()
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				resp, err := client.Get(target)
				if err != nil {
					failed.CompareAndSwap(nil, err.Error())
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.CompareAndSwap(nil, resp.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if msg := failed.Load(); msg != nil {
		b.Fatalf("a request failed: %v", msg)
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
