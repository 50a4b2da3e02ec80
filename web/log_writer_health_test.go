package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

// fakeWriterState plays the refusal log writer's Stats.
type fakeWriterState struct {
	mu sync.Mutex
	st models.RefusalWriterStats
}

func (f *fakeWriterState) set(st models.RefusalWriterStats) {
	f.mu.Lock()
	f.st = st
	f.mu.Unlock()
}

func (f *fakeWriterState) stats() models.RefusalWriterStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}

// Finding 1: /healthz stayed 200 "ok" while the writer dropped a third of
// the log, and the log page said nothing.
func TestHealthzAndTheLogPageReportTheWriter(t *testing.T) {
	fake := &fakeWriterState{}
	h := newHarnessWith(t, func(d *Deps) {
		d.LogWriters = func() []models.NamedWriterStats {
			return []models.NamedWriterStats{{Log: "refusals", Rows: "refusals", RefusalWriterStats: fake.stats()}}
		}
	})
	admin := h.signedIn("ada", models.RoleAdmin)
	health := func() (int, map[string]any) {
		p := h.browser().get("/healthz")
		var body map[string]any
		if err := json.Unmarshal([]byte(p.body), &body); err != nil {
			t.Fatalf("healthz body %q: %v", p.body, err)
		}
		return p.status, body
	}
	tests := []struct {
		name      string
		st        models.RefusalWriterStats
		status    int
		overall   string
		state     string
		bannerHas string // "" means no banner
	}{
		{"healthy", models.RefusalWriterStats{Written: 10}, 200, "ok", "ok", ""},
		{"stalled", models.RefusalWriterStats{Stalled: true, StalledFor: 42 * time.Second, Queued: 5, SpillRows: 1000}, 200, "degraded", "stalled",
			"has not accepted new refusals for 42s. 1005 refusals are kept"},
		{"draining", models.RefusalWriterStats{SpillRows: 700}, 200, "ok", "draining", "700 refusals held back"},
		{"dropping", models.RefusalWriterStats{Stalled: true, Dropped: 3, LastDrop: time.Now()}, 503, "degraded", "dropping", "has lost 3 refusals"},
		{"dropped long ago", models.RefusalWriterStats{Dropped: 3, LastDrop: time.Now().Add(-time.Hour)}, 200, "ok", "ok", "has lost 3 refusals"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.set(tt.st)
			status, body := health()
			writer, _ := body["refusal_log"].(map[string]any)
			if status != tt.status || body["status"] != tt.overall || writer["state"] != tt.state {
				t.Fatalf("healthz = %d %v, want %d status %q, refusal_log.state %q", status, body, tt.status, tt.overall, tt.state)
			}
			p := admin.get("/refusals")
			banner := strings.TrimSpace(p.doc.Find(`[data-testid="writer-notice"]`).Text())
			if tt.bannerHas == "" && banner != "" || !strings.Contains(banner, tt.bannerHas) {
				t.Fatalf("banner %q, want it to say %q", banner, tt.bannerHas)
			}
		})
	}
	if p := admin.get("/refusals"); p.status != http.StatusOK {
		t.Fatalf("log page: %d", p.status)
	}
}

// Every log writer is reported, not only the refusal log's: a stalled
// decisions store (ticket timelines) degrades /healthz under its own
// name, and one that drops rows fails it, while the refusals are fine.
func TestHealthzAndTheBannerCoverEveryLogWriter(t *testing.T) {
	refusals, decisions := &fakeWriterState{}, &fakeWriterState{}
	h := newHarnessWith(t, func(d *Deps) {
		d.LogWriters = func() []models.NamedWriterStats {
			return []models.NamedWriterStats{
				{Log: "refusals", Rows: "refusals", RefusalWriterStats: refusals.stats()},
				{Log: "decisions", Rows: "allowed decisions", RefusalWriterStats: decisions.stats()},
			}
		}
	})
	admin := h.signedIn("ada", models.RoleAdmin)
	refusals.set(models.RefusalWriterStats{Written: 5})
	for _, tt := range []struct {
		st      models.RefusalWriterStats
		status  int
		state   string
		overall string
		banner  string
	}{
		{models.RefusalWriterStats{Written: 5}, 200, "ok", "ok", ""},
		{models.RefusalWriterStats{Stalled: true, StalledFor: 9 * time.Second, SpillRows: 40}, 200, "stalled", "degraded",
			"has not accepted new allowed decisions for 9s. 40 allowed decisions are kept"},
		{models.RefusalWriterStats{Dropped: 2, LastDrop: time.Now()}, 503, "dropping", "degraded", "has lost 2 allowed decisions"},
	} {
		decisions.set(tt.st)
		p := h.browser().get("/healthz")
		var body struct {
			Status     string
			LogWriters map[string]struct{ State string } `json:"log_writers"`
			RefusalLog struct{ State string }            `json:"refusal_log"`
		}
		if err := json.Unmarshal([]byte(p.body), &body); err != nil {
			t.Fatal(err)
		}
		if p.status != tt.status || body.Status != tt.overall || body.LogWriters["decisions"].State != tt.state ||
			body.LogWriters["refusals"].State != "ok" || body.RefusalLog.State != "ok" {
			t.Errorf("healthz = %d %s, want %d %q with decisions %q and refusals ok", p.status, p.body, tt.status, tt.overall, tt.state)
		}
		banner := strings.TrimSpace(admin.get("/refusals").doc.Find(`[data-testid="writer-notice"]`).Text())
		if tt.banner == "" && banner != "" || !strings.Contains(banner, tt.banner) {
			t.Errorf("banner %q, want it to say %q", banner, tt.banner)
		}
	}
}
