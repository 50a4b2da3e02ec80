package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

func TestMetricsCountDecisionsAndLatencyBehindAuth(t *testing.T) {
	store, err := models.Open(filepath.Join(t.TempDir(), "console.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m := NewMetrics()
	m.Record(guard.Record{Caller: guard.Caller{Tool: "fetch_url"}, Host: "a.example.com", Elapsed: 120 * time.Millisecond})
	m.Record(guard.Record{Caller: guard.Caller{Tool: "fetch_url"}, Host: "a.example.com", Cached: true, Elapsed: time.Millisecond})
	m.Record(guard.Record{Caller: guard.Caller{Tool: "take_screenshot"}, Refusal: &guard.Refusal{Code: guard.CodeForbidden}})
	m.Record(guard.Record{Caller: guard.Caller{Tool: "proxy"}, Proxied: true, Refusal: &guard.Refusal{Code: guard.CodeTimeout, Kind: guard.KindNetwork}})
	srv := httptest.NewServer(New(Deps{Store: store, Agents: app.ForStore(store, app.StoreOptions{}), Metrics: m.Handler(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer srv.Close()

	get := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, _ := get(""); status != http.StatusUnauthorized {
		t.Fatalf("anonymous /metrics: %d", status)
	}
	if status, _ := get("obt_wrong"); status != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d", status)
	}
	token, _ := tools.NewToken()
	if _, err := store.CreateToken(context.Background(), "prometheus", tools.HashToken(token)); err != nil {
		t.Fatal(err)
	}
	status, body := get(token)
	if status != 200 {
		t.Fatalf("with a token: %d", status)
	}
	for _, want := range []string{
		`outbound_decisions_total{code="",kind="",outcome="allowed",tool="fetch_url",via="call"} 2`,
		`outbound_decisions_total{code="forbidden",kind="policy",outcome="refused",tool="take_screenshot",via="call"} 1`,
		`outbound_decisions_total{code="timeout",kind="network",outcome="refused",tool="proxy",via="proxy"} 1`,
		`outbound_fetch_seconds_count{tool="fetch_url"} 1`, // the cached read takes no time worth timing
		`outbound_fetch_seconds_bucket{tool="fetch_url",le="0.25"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
