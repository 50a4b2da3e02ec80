package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
)

// BenchmarkRefusalPath is the cost of one refused request, end to end in
// one process, for profiling (-cpuprofile, -memprofile): through the JSON
// API (token, JSON, registry, guard, record, the writer's insert) and
// through the proxy. Every request is a distinct private URL, refused
// before any lookup. cpu-µs/op is the whole process, the 32 clients
// included, until every row is committed; TestIngestLoad measures the
// serving processes alone.
func BenchmarkRefusalPath(b *testing.B) {
	for _, path := range []string{"api", "proxy"} {
		b.Run(path, func(b *testing.B) {
			ctx := context.Background()
			// The decision log goes to a file, as a service's stderr does.
			logFile, err := os.Create(filepath.Join(b.TempDir(), "decisions.log"))
			if err != nil {
				b.Fatal(err)
			}
			defer logFile.Close()
			a, err := app.Open(ctx, tempDB(b), app.Options{Log: jsonLog(logFile), DecisionLog: logFile})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			token, _ := tools.NewToken()
			if _, err := a.Store().CreateToken(ctx, "bench", tools.HashToken(token)); err != nil {
				b.Fatal(err)
			}
			var newSender func() func(string) error
			switch path {
			case "api":
				reg := tools.Builtin(tools.Deps{Guard: a.Guard(), Settings: a.Settings})
				srv := httptest.NewServer(reg.API(a))
				defer srv.Close()
				newSender = apiRefusal(srv.URL, token)
			case "proxy":
				proxy, err := standaloneProxy(a)
				if err != nil {
					b.Fatal(err)
				}
				srv := httptest.NewServer(proxy)
				defer srv.Close()
				newSender = proxyRefusal(srv.URL, token)
			}
			var next atomic.Int64
			var failed atomic.Value
			var wg sync.WaitGroup
			b.ReportAllocs()
			cpu := processCPU()
			b.ResetTimer()
			for range 32 {
				wg.Go(func() {
					send := newSender()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						h := i % 5000
						if err := send(fmt.Sprintf("http://10.%d.%d.%d/page/%d", h>>16&255, h>>8&255, h&255, i)); err != nil {
							failed.CompareAndSwap(nil, err.Error())
							return
						}
					}
				})
			}
			wg.Wait()
			for st := a.RefusalLogStats(); st.Written < uint64(b.N); st = a.RefusalLogStats() {
				if msg := failed.Load(); msg != nil {
					b.Fatalf("a request failed: %v", msg)
				}
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		})
	}
}
