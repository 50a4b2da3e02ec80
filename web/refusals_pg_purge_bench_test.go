package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboundhq/outbound/internal/pgtest"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// BenchmarkPGScalePurgePage is issue 12's "log page during a retention
// purge at ten million rows", measured the way support meets it: GET
// /refusals through the real handler (session, today's count, today's
// most refused hosts as the page keeps them, the first page, the filter
// menus, templ), every 20 ms, while the purge deletes the oldest 30 days
// of the seed and a trickle of new refusals (1,000 a second, on the
// flooded day the page calls today) keeps today's count moving, so the
// page ranks today's hosts again as often as it would during a flood.
//
// It runs on the database models' BenchmarkPGScale seeds (OUTBOUND_SCALE_ROWS
// rows in schema scale_N of OUTBOUND_TEST_POSTGRES), and spends it as
// models' BenchmarkPGScalePurge does: seed it with
//
//	go test -run '^$' -bench 'PGScale$' -benchtime 1x -timeout 3h ./models/
//
// then run this one alone (-bench PGScalePurgePage ./web/). The seed's
// shape is read from the rows (the oldest day, the flooded last day), not
// assumed.
func BenchmarkPGScalePurgePage(b *testing.B) {
	if testing.Short() {
		b.Skip("needs a seeded ten-million-row database; skipped with -short")
	}
	n, err := strconv.ParseInt(os.Getenv("OUTBOUND_SCALE_ROWS"), 10, 64)
	if err != nil || n < 100_000 {
		b.Skip("set OUTBOUND_SCALE_ROWS (and seed that database with models' BenchmarkPGScale) to run the purge-page benchmark")
	}
	dsn := pgScaleSchema(b, pgtest.DSN(b), n)
	var oldest, newest time.Time
	pgQueryRow(b, dsn, "SELECT MIN(time), MAX(time) FROM refusals", &oldest, &newest)
	pgtest.Exec(b, dsn, "DELETE FROM scale_seed") // spent from here on, whatever happens below
	store, err := models.Open(dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	ctx := context.Background()
	today := newest.UTC().Truncate(24 * time.Hour)
	var clock sync.Mutex
	// Late on the flooded day, with an hour left: the purge takes minutes.
	now := today.Add(23 * time.Hour)
	tick := func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	srv := New(Deps{
		Store: store, Now: tick,
		Settings: func() tools.Settings { return tools.DefaultSettings() },
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	session := benchSession(b, store, now)
	load := func() (time.Duration, error) {
		req := httptest.NewRequest(http.MethodGet, "/refusals", nil)
		req.Host = "127.0.0.1:8080"
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: session})
		rec := httptest.NewRecorder()
		start := time.Now()
		srv.ServeHTTP(rec, req)
		took := time.Since(start)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="refusal-row"`) {
			return took, fmt.Errorf("GET /refusals: %d, %d bytes", rec.Code, rec.Body.Len())
		}
		return took, nil
	}
	if _, err := load(); err != nil { // the first load ranks today's hosts; so does every one after the count moves
		b.Fatal(err)
	}

	stop := make(chan struct{})
	var (
		mu       sync.Mutex
		pages    []time.Duration
		failures []error
		added    int
	)
	var running sync.WaitGroup
	running.Go(func() { // the page, every 20 ms
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			took, err := load()
			mu.Lock()
			pages = append(pages, took)
			if err != nil {
				failures = append(failures, err)
			}
			mu.Unlock()
		}
	})
	running.Go(func() { // the flood goes on: 100 refusals every 100 ms, the page's clock at the real pace
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			clock.Lock()
			now = now.Add(100 * time.Millisecond)
			at := now
			clock.Unlock()
			rows := make([]models.Refusal, 100)
			for j := range rows {
				host := fmt.Sprintf("flood-%05d.attacker.example", (i*100+j)%20000)
				rows[j] = models.Refusal{Time: at, Tool: "proxy", URL: "https://" + host + "/late/" + strconv.Itoa(i*100+j), Host: host, Port: 443,
					Code: "not_allowlisted", Reason: "not_allowlisted", Message: "refused: not_allowlisted", Agent: "agent-flood", Thread: "thread-flood", Proxied: true}
			}
			err := store.InsertRefusals(ctx, rows)
			mu.Lock()
			if err != nil {
				failures = append(failures, err)
			} else {
				added += len(rows)
			}
			mu.Unlock()
		}
	})
	cutoff := oldest.UTC().Truncate(24 * time.Hour).Add(30*24*time.Hour + 30*time.Minute)
	start := time.Now()
	purged, err := store.PurgeRefusalsBefore(ctx, cutoff)
	took := time.Since(start)
	close(stop)
	running.Wait()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		b.Fatalf("%d failures during the purge, the first: %v", len(failures), failures[0])
	}
	if purged == 0 || len(pages) == 0 {
		b.Fatalf("purged %d rows with %d page loads: nothing measured", purged, len(pages))
	}
	slices.Sort(pages)
	at := func(p int) float64 { return float64(pages[(len(pages)*p+99)/100-1]) / float64(time.Millisecond) }
	b.ReportMetric(float64(purged), "purged")
	b.ReportMetric(float64(purged)/took.Seconds(), "rows/s")
	b.ReportMetric(at(50), "page-p50-ms")
	b.ReportMetric(at(95), "page-p95-ms")
	b.ReportMetric(at(99), "page-p99-ms")
	over := len(pages) - sort.Search(len(pages), func(i int) bool { return pages[i] > 100*time.Millisecond })
	b.ReportMetric(float64(over), "loads-over-100ms")
	b.ReportMetric(float64(pages[len(pages)-1])/float64(time.Millisecond), "page-max-ms")
	b.Logf("purged %d rows before %s in %v (%.0f rows/s) while %d refusals came in; %d page loads: p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, %d over 100 ms, the slowest %v; load %s",
		purged, cutoff.Format(time.RFC3339), took.Round(time.Millisecond), float64(purged)/took.Seconds(), added, len(pages), at(50), at(95), at(99),
		over, pages[len(pages)-1].Round(time.Millisecond), loadAverage())
}

// pgScaleSeedVersion is models' scaleSeedVersion, the seed's shape this
// benchmark was written for (flooded last day, a base of 90 days).
const pgScaleSeedVersion = "pg-scale-v3"

// pgScaleSchema is the DSN of models' seeded scale schema for rows
// refusals, skipping when it is not seeded (or spent by a purge).
func pgScaleSchema(b *testing.B, dsn string, rows int64) string {
	schema := fmt.Sprintf("scale_%d", rows)
	target := pgtest.WithSearchPath(b, dsn, schema)
	var version string
	if err := pgTryQueryRow(target, "SELECT version FROM scale_seed", &version); err != nil || version != pgScaleSeedVersion {
		b.Skipf("schema %s holds no unspent seed of version %s (%q, %v): seed it with models' BenchmarkPGScale first", schema, pgScaleSeedVersion, version, err)
	}
	return target
}

// pgQueryRow scans one row of stmt, run on the database dsn names.
func pgQueryRow(b *testing.B, dsn, stmt string, dest ...any) {
	b.Helper()
	if err := pgTryQueryRow(dsn, stmt, dest...); err != nil {
		b.Fatalf("%s: %v", stmt, err)
	}
}

func pgTryQueryRow(dsn, stmt string, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, stmt).Scan(dest...)
}

// loadAverage is the one-minute load average, as text ("?" where /proc is
// missing): a p95 on a busy 2-core machine is not one at rest.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}
