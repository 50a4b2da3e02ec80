package models

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRefusalOverview times the Overview page's queries on the
// million-row benchmark database (about 11,000 refusals a day): 24 hour
// buckets, 30 day buckets (a third of the rows), and the top lists and
// reasons of the last 24 hours. The target is a p95 of 150 ms. "cold"
// counts every bucket; "warm" is a reload, with the closed buckets in the
// cache.
func BenchmarkRefusalOverview(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a 1,000,000-row database; skipped with -short")
	}
	s := openOverviewBenchStore(b)
	end := benchStart.Add(benchRows * benchStep)
	q := OverviewQuery{Now: end, Hours: 24, Days: 30, Top: 8, TopSince: end.Add(-24 * time.Hour),
		AttackReasons: []string{"internal_name", "internal_address", "metadata", "connect_check", "numeric_host", "zone", "tunnel_name"}}
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		cache *OverviewCache
	}{{"cold", nil}, {"warm", NewOverviewCache(10 * time.Minute)}} {
		b.Run(c.name, func(b *testing.B) {
			q := q
			q.Cache = c.cache
			run := func() {
				if _, err := s.RefusalOverview(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := processCPU()
			for b.Loop() {
				run()
			}
			// CPU time per page too: on a shared machine the wall clock
			// mostly measures the other processes.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/float64(time.Millisecond), "cpu-ms/op")
			reportP95(b, 50, run)
		})
	}
}

// openOverviewBenchStore opens a copy of the shared benchmark database:
// opening it adds the Overview's index, which must not change what other
// benchmarks on the shared file measure.
func openOverviewBenchStore(b *testing.B) *Store {
	b.Helper()
	path := filepath.Join(os.TempDir(), "outbound-models-bench-"+benchSeedVersion+"-overview.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		openBenchStore(b).Close() // seeds the shared file if needed
		shared := filepath.Join(os.TempDir(), "outbound-models-bench-"+benchSeedVersion+".db")
		if err := copyFile(shared, path+".copying"); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(path+".copying", path); err != nil {
			b.Fatal(err)
		}
	}
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	return out.Close()
}
