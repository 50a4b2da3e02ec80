package web

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/outboundhq/outbound/internal/app"
)

// ReloadReporter is a replica's reload state (*app.App).
type ReloadReporter interface{ ReloadStatus() app.ReloadStatus }

// storeHealth and reloadHealthBody are /healthz's per-replica detail: a
// load balancer or an operator comparing replicas sees which database each
// uses, which configuration each enforces and how changes reach it.
type storeHealth struct {
	Engine string `json:"engine"` // sqlite or postgres
	OK     bool   `json:"ok"`     // the revision was read just now
}

type reloadHealthBody struct {
	// Revision is the configuration in force here; Current says whether
	// it is the stored one (false for the moments a change takes to
	// arrive, or while a stored change fails to load).
	Revision   int64  `json:"revision"`
	Current    bool   `json:"current"`
	ReloadedAt string `json:"reloaded_at,omitempty"`
	// LagMS is how late the last change made elsewhere came into force
	// here, in milliseconds (commit to end of reload).
	LagMS float64 `json:"last_lag_ms"`
	// Notifications is "listening" (PostgreSQL LISTEN held), "polling"
	// (the fallback, and SQLite's way) or "off" (no watch runs).
	Notifications string `json:"notifications"`
	// FailingSince and Error: the stored change this replica has been
	// failing to load, retried every poll, since when and why.
	FailingSince string `json:"failing_since,omitempty"`
	Error        string `json:"error,omitempty"`
}

// reloadStaleAfter is how long a replica may fail to load the stored
// configuration before /healthz answers 503: past it, the replica may be
// enforcing an allowlist wider than the stored one (an entry removed
// elsewhere), so a load balancer should send agents to a replica that
// is current. Shorter would take replicas out for a failover's blip,
// which the retry every poll rides out.
const reloadStaleAfter = 5 * time.Second

// staleReload reports whether st has failed to load the stored
// configuration for longer than reloadStaleAfter at now.
func staleReload(st app.ReloadStatus, stored int64, now time.Time) bool {
	return st.Revision != stored && !st.FailingSince.IsZero() && now.Sub(st.FailingSince) > reloadStaleAfter
}

func reloadHealth(st app.ReloadStatus, stored int64) (storeHealth, reloadHealthBody) {
	r := reloadHealthBody{
		Revision: st.Revision,
		Current:  st.Revision == stored,
		LagMS:    float64(st.Lag.Microseconds()) / 1000,
	}
	if !st.ReloadedAt.IsZero() {
		r.ReloadedAt = st.ReloadedAt.UTC().Format(time.RFC3339Nano)
	}
	if !st.FailingSince.IsZero() && !r.Current {
		r.FailingSince, r.Error = st.FailingSince.UTC().Format(time.RFC3339Nano), st.ReloadError
	}
	switch {
	case !st.Watching:
		r.Notifications = "off"
	case st.Listening:
		r.Notifications = "listening"
	default:
		r.Notifications = "polling"
	}
	return storeHealth{Engine: st.Engine, OK: true}, r
}

// Revisioner reads the stored configuration's revision (*models.Store).
type Revisioner interface {
	Revision(ctx context.Context) (int64, error)
}

// replicaHealth is /healthz's account of a replica's store and reload
// state (reloads may be nil: no detail), and whether the replica is
// stale; an error when the database cannot be read.
func replicaHealth(ctx context.Context, store Revisioner, reloads ReloadReporter, now time.Time) (body map[string]any, stale bool, err error) {
	rev, err := store.Revision(ctx)
	if err != nil {
		return nil, false, err
	}
	body = map[string]any{"status": "ok", "revision": rev}
	if reloads != nil {
		st := reloads.ReloadStatus()
		body["store"], body["reload"] = reloadHealth(st, rev)
		if stale = staleReload(st, rev, now); stale {
			body["status"] = "stale"
		}
	}
	return body, stale, nil
}

// HealthzHandler answers /healthz for a process that serves no console
// (`console proxy`): the store and reload state serve's /healthz gives,
// 503 "stale" past reloadStaleAfter of failing to load a stored change
// and 503 "unavailable" when the database cannot be read, so a load
// balancer takes such a replica out too.
func HealthzHandler(store Revisioner, reloads ReloadReporter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, stale, err := replicaHealth(r.Context(), store, reloads, time.Now())
		code := http.StatusOK
		switch {
		case err != nil:
			body, code = map[string]any{"status": "unavailable", "error": "the database cannot be read"}, http.StatusServiceUnavailable
		case stale:
			code = http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	})
}
