package web

import (
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
