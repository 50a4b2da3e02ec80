package guard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proxyBenchClients is how many keep-alive clients send at once, about
// what a few browsers loading pages side by side keep open.
const proxyBenchClients = 64

// BenchmarkProxyThroughput measures requests per second from 64
// concurrent keep-alive clients to one loopback server: directly, through
// a minimal unguarded Go forward proxy, and through the guarded proxy. The
// guarded proxy does the work the minimal one skips: authenticate, decide
// under the policy, strip hop-by-hop headers, dial through the connect
// check, watch the timeout. Target: guarded ≥ 0.9 × minimal.
func BenchmarkProxyThroughput(b *testing.B) {
	body := strings.Repeat("x", 1024)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, body)
	}))
	defer server.Close()
	target := server.URL + "/page"

	// The baseline pools connections as the guard's transport does, so the
	// two differ only in the guard's work.
	minimal := httptest.NewServer(minimalProxy(&http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}))
	defer minimal.Close()

	g := New(Options{Policy: mustPolicy(b, DefaultSettings(), strings.TrimPrefix(server.URL, "http://"))})
	defer g.Close()
	guarded, err := g.StartProxy(EmbeddedProxyOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer guarded.Close()
	user, pass := guarded.ProcessCredential()

	b.Run("direct", func(b *testing.B) { runProxyBench(b, target, nil) })
	b.Run("minimal", func(b *testing.B) {
		runProxyBench(b, target, &url.URL{Scheme: "http", Host: minimal.Listener.Addr().String()})
	})
	b.Run("guarded", func(b *testing.B) {
		runProxyBench(b, target, &url.URL{Scheme: "http", Host: guarded.Addr(), User: url.UserPassword(user, pass)})
	})
}

// minimalProxy is the baseline: an unguarded forward proxy that sends
// absolute-URI requests on with one shared transport and copies the
// answer back, checking nothing. It copies through the same buffer pool
// as the guarded proxy, so the comparison measures the guard's work.
func minimalProxy(tr *http.Transport) http.Handler {
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
		buf := copyBuffers.Get().(*[]byte) // a pooled buffer, as the guarded proxy has: plain io.Copy would allocate 32 KiB per request
		_, _ = io.CopyBuffer(struct{ io.Writer }{w}, resp.Body, *buf)
		copyBuffers.Put(buf)
	})
}

// runProxyBench sends b.N GETs of target from proxyBenchClients clients
// that share one keep-alive transport, through proxy when it is set.
func runProxyBench(b *testing.B, target string, proxy *url.URL) {
	tr := &http.Transport{MaxIdleConnsPerHost: proxyBenchClients}
	if proxy != nil {
		tr.Proxy = http.ProxyURL(proxy)
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range proxyBenchClients {
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
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
