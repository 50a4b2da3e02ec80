package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/internal/pgtest"
	"github.com/outboundhq/outbound/models"
)

// TestHealthzTakesOutAReplicaWhoseReloadHangs: a reload that never
// returns (blocked by a lock on a table it reads, as a migration or a
// half-open connection blocks it) is a reload that fails. The replica
// keeps the previous policy, which may be wider than the stored one (here
// an entry removed elsewhere), so /healthz must take it out as it takes
// out one whose reload errs, and the change must come into force once the
// lock goes.
func TestHealthzTakesOutAReplicaWhoseReloadHangs(t *testing.T) {
	target := pgtest.Schema(t)
	h := newHarnessOn(t, target, func(d *Deps) { d.Reloads = d.Config.(ReloadReporter) })
	other := newHarnessOn(t, target, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go h.app.Watch(ctx)

	if _, err := other.app.AddEntries(ctx, app.AddEntries{Entries: []string{"docs.example.com", "kept.example.com"}, Actor: "test", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the entry added elsewhere", func() bool { return h.guard.Precheck("https://docs.example.com/").Allowed })
	conn, err := pgx.Connect(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "LOCK TABLE integrations IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	// Through the store: the other replica's own reload would hang too.
	removed := time.Now()
	if _, err := other.store.RemoveAllowlistEntries(ctx, models.AnyRevision, []string{"docs.example.com"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reloadStaleAfter+reloadTimeoutForTest+3*time.Second, "/healthz 503 from the replica whose reload hangs", func() bool {
		return h.browser().get("/healthz").status == http.StatusServiceUnavailable
	})
	if d := time.Since(removed); d < reloadStaleAfter {
		t.Errorf("stale %v after the change, before reloadStaleAfter (%v)", d, reloadStaleAfter)
	}
	if st := h.app.ReloadStatus(); !strings.Contains(st.ReloadError, "could not be read within 2s (a lock held on its tables") {
		t.Errorf("the reload status does not say the configuration could not be read in time: %+v", st)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the removal in force once the lock is gone", func() bool {
		return !h.guard.Precheck("https://docs.example.com/").Allowed && h.browser().get("/healthz").status == http.StatusOK
	})
}

// reloadTimeoutForTest is app's bound on one reload, which the replica
// takes before it knows the reload failed.
const reloadTimeoutForTest = app.ReloadTimeout

// waitFor polls ok every 20 ms until it holds, failing t after within.
func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
