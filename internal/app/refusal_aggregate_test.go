package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

// countingRecorder counts the records the metrics would.
type countingRecorder struct{ n atomic.Int64 }

func (c *countingRecorder) Record(guard.Record) { c.n.Add(1) }

// A hostile agent hammering one refused host through the proxy: every
// request is counted in the metrics and has its JSON log line, but the
// refusal log gets a handful of rows whose counts sum to every request,
// and the writer's queue never holds the flood.
func TestAFloodOfIdenticalProxyRefusalsIsAggregated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "console.db")
	var logs syncBuffer
	metrics := &countingRecorder{}
	a, err := Open(context.Background(), path, Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)), Metrics: metrics, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	const n = 10_000
	maxQueued := 0
	start := time.Now()
	for i := range n {
		a.record(guard.Record{Caller: guard.Caller{Tool: ProxyTool, Agent: "bot"}, Proxied: true, Host: "evil.example", Port: 80,
			URL:     fmt.Sprintf("http://evil.example/x?%d", i),
			Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, Host: "evil.example", URL: fmt.Sprintf("http://evil.example/x?%d", i)}})
		// A second agent's refusals of the same host stay apart.
		if i%1000 == 0 {
			a.record(guard.Record{Caller: guard.Caller{Tool: ProxyTool, Agent: "other"}, Proxied: true, Host: "evil.example", Port: 80,
				Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, Host: "evil.example"}})
			st := a.RefusalLogStats()
			maxQueued = max(maxQueued, st.Queued+st.InFlight)
		}
	}
	// Each kind is at most two rows a window: its first, then the merged.
	maxRows := 2 * (int64(time.Since(start)/models.AggregateWindow) + 2)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	const others = n / 1000
	if got := metrics.n.Load(); got != n+others {
		t.Errorf("%d metric increments, want %d: one per request", got, n+others)
	}
	if got := strings.Count(logs.String(), `"msg":"refused"`); got != n+others {
		t.Errorf("%d decision log lines, want %d: one per request", got, n+others)
	}
	if maxQueued > 10 {
		t.Errorf("the refusal queue held %d rows during the flood", maxQueued)
	}
	store, err := OpenStore(path, MustExist)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, tc := range []struct {
		agent string
		want  int
	}{{"bot", n}, {"other", others}} {
		var requests, rows int64
		db := openOther(t, path, "_query_only=on")
		if err := db.QueryRow("SELECT COALESCE(SUM(repeat_count), 0), COUNT(*) FROM refusals WHERE agent = ?", tc.agent).Scan(&requests, &rows); err != nil {
			t.Fatal(err)
		}
		db.Close()
		t.Logf("agent %s: %d requests in %d rows", tc.agent, requests, rows)
		if requests != int64(tc.want) || rows > maxRows {
			t.Errorf("agent %s: %d requests in %d rows; want %d in at most %d", tc.agent, requests, rows, tc.want, maxRows)
		}
	}
	if got, err := store.CountRefusalsSince(context.Background(), time.Now().Add(-time.Hour)); err != nil || got != n+others {
		t.Errorf("the log's count is %d, %v; want every request, %d", got, err, n+others)
	}
}

// The burst_window setting is read by the running aggregator: set to 0,
// every refusal of a flood is a row of its own; set back, the next flood
// is merged again. No restart in between.
func TestBurstWindowSettingSwitchesMergingInARunningApp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "console.db")
	a, err := Open(ctx, path, Options{Log: slog.New(slog.DiscardHandler), Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	setWindow := func(v string) {
		t.Helper()
		st, err := a.StoredSettings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.SetSettings(ctx, SetSettings{Values: map[string]string{"burst_window": v}, Actor: "ada", Version: st.Version}); err != nil {
			t.Fatal(err)
		}
		// Past the aggregator's current window (or its off-poll), so the
		// next refusal meets the new value.
		time.Sleep(models.AggregateWindow + 100*time.Millisecond)
	}
	flood := func(agent string, n int) {
		for i := range n {
			a.record(guard.Record{Caller: guard.Caller{Tool: ProxyTool, Agent: agent}, Proxied: true, Host: "evil.example", Port: 80,
				Refusal: &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonNotAllowlisted, Host: "evil.example", URL: fmt.Sprintf("http://evil.example/%d", i)}})
		}
	}
	const n = 200
	setWindow("0")
	flood("off", n)
	setWindow("10s") // one window covers the whole flood
	flood("on", n)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	db := openOther(t, path, "_query_only=on")
	defer db.Close()
	for _, tc := range []struct {
		agent    string
		wantRows int64
	}{{"off", n}, {"on", 2}} {
		var requests, rows int64
		if err := db.QueryRow("SELECT COALESCE(SUM(repeat_count), 0), COUNT(*) FROM refusals WHERE agent = ?", tc.agent).Scan(&requests, &rows); err != nil {
			t.Fatal(err)
		}
		if requests != n || rows != tc.wantRows {
			t.Errorf("agent %s: %d requests in %d rows, want %d in %d", tc.agent, requests, rows, n, tc.wantRows)
		}
	}
}
