package web

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/app"
)

// fixedReloads reports a fixed reload state.
type fixedReloads struct{ st app.ReloadStatus }

func (f fixedReloads) ReloadStatus() app.ReloadStatus { return f.st }

// TestHealthzTakesOutAReplicaThatCannotLoadTheStoredChange: a replica
// that has failed to load the stored configuration for longer than
// reloadStaleAfter may be enforcing an allowlist wider than the stored
// one, so /healthz answers 503 ("stale") with when and why, and a load
// balancer sends agents elsewhere. For a shorter failure it stays 200,
// saying it is not current; a replica merely behind, without failures
// (a change on its way), is not stale.
func TestHealthzTakesOutAReplicaThatCannotLoadTheStoredChange(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		revision   int64 // enforced; the stored one is the harness's
		failingFor time.Duration
		status     int
		overall    string
	}{
		{"current", 0, 0, http.StatusOK, "ok"},
		{"behind, not failing", -1, 0, http.StatusOK, "ok"},
		{"failing briefly", -1, 2 * time.Second, http.StatusOK, "ok"},
		{"failing too long", -1, 6 * time.Second, http.StatusServiceUnavailable, "stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &fixedReloads{}
			h := newHarnessWith(t, func(d *Deps) {
				d.Reloads = rep
				d.Now = func() time.Time { return now }
			})
			stored, err := h.store.Revision(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			rep.st = app.ReloadStatus{Engine: "sqlite", Revision: stored + tc.revision, Watching: true}
			if tc.failingFor > 0 {
				rep.st.FailingSince, rep.st.ReloadError = now.Add(-tc.failingFor), "no such table: settings"
			}
			p := h.browser().get("/healthz")
			var body struct {
				Status string `json:"status"`
				Reload struct {
					Current      bool   `json:"current"`
					FailingSince string `json:"failing_since"`
					Error        string `json:"error"`
				} `json:"reload"`
			}
			if err := json.Unmarshal([]byte(p.body), &body); err != nil {
				t.Fatalf("healthz body %q: %v", p.body, err)
			}
			if p.status != tc.status || body.Status != tc.overall {
				t.Fatalf("healthz = %d %q, want %d %q: %s", p.status, body.Status, tc.status, tc.overall, p.body)
			}
			if body.Reload.Current != (tc.revision == 0) {
				t.Errorf("current = %v: %s", body.Reload.Current, p.body)
			}
			if failing := tc.failingFor > 0; failing != (body.Reload.Error == "no such table: settings" && body.Reload.FailingSince == now.Add(-tc.failingFor).Format(time.RFC3339Nano)) {
				t.Errorf("failing for %v, reload says %+v", tc.failingFor, body.Reload)
			}
		})
	}
}
