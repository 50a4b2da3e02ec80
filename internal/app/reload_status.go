package app

import (
	"context"
	"sync"
	"time"
)

// ReloadStatus is how current this process's configuration is: what
// /healthz reports per replica, and what the reload-lag metric measures.
type ReloadStatus struct {
	// Engine is the store's: "sqlite" or "postgres".
	Engine string
	// Revision is the configuration revision in force in this process.
	Revision int64
	// ReloadedAt is when this process last loaded the configuration.
	ReloadedAt time.Time
	// Lag is how long the last change another process made took to be in
	// force here: from its commit (the writer's clock) to the end of this
	// process's reload. Zero until the watch has applied one.
	Lag time.Duration
	// Listening is true while a PostgreSQL replica holds its LISTEN
	// connection; false means changes arrive by polling alone (always, on
	// SQLite).
	Listening bool
	// Watching is true while the watch runs (serve, mcp and proxy run it;
	// one-shot commands do not).
	Watching bool
	// FailingSince is when the watch first failed to load the stored
	// change it is retrying, and ReloadError why it last failed; zero and
	// "" while nothing fails.
	FailingSince time.Time
	ReloadError  string
}

// reloadState is the mutable part of ReloadStatus.
type reloadState struct {
	mu           sync.Mutex
	at           time.Time
	lag          time.Duration
	watching     bool
	failingSince time.Time
	failure      string
}

// ReloadStatus reports how current this process's configuration is.
func (a *App) ReloadStatus() ReloadStatus {
	a.reloadState.mu.Lock()
	defer a.reloadState.mu.Unlock()
	return ReloadStatus{
		Engine:     a.store.Engine(),
		Revision:   a.revision.Load(),
		ReloadedAt: a.reloadState.at,
		Lag:        a.reloadState.lag,
		Listening:  a.store.Listening(),
		Watching:   a.reloadState.watching,

		FailingSince: a.reloadState.failingSince,
		ReloadError:  a.reloadState.failure,
	}
}

// noteReloadFailing records that the watch has been failing to load the
// stored change since since (zero: it no longer fails).
func (a *App) noteReloadFailing(since time.Time, err error) {
	a.reloadState.mu.Lock()
	defer a.reloadState.mu.Unlock()
	a.reloadState.failingSince, a.reloadState.failure = since, ""
	if err != nil {
		a.reloadState.failure = err.Error()
	}
}

func (a *App) setWatching(on bool) {
	a.reloadState.mu.Lock()
	a.reloadState.watching = on
	a.reloadState.mu.Unlock()
}

func (a *App) noteReload(at time.Time) {
	a.reloadState.mu.Lock()
	a.reloadState.at = at
	a.reloadState.mu.Unlock()
}

// noteWatchedChange measures how late the change that made the revision
// now in force reached this process, and hands it to the ReloadLag hook.
func (a *App) noteWatchedChange(ctx context.Context) {
	rev, changed, err := a.store.RevisionChanged(ctx)
	if err != nil || changed.IsZero() || rev != a.revision.Load() {
		return // a newer change landed meanwhile: its own reload measures it
	}
	lag := max(time.Since(changed), 0)
	a.reloadState.mu.Lock()
	a.reloadState.lag = lag
	a.reloadState.mu.Unlock()
	if a.reloadLag != nil {
		a.reloadLag(lag)
	}
}
