package app

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/models"
)

// TestAChangeThatFailedToLoadIsLoadedOnceItCan: a change another process
// makes is retried until it loads. When the watch sees it, a table the
// reload reads is away (a failover, a lock: here renamed), so the reload
// fails; once the table is back the change is in
// force, with nothing else changing meanwhile. Both the policy and the
// integrations: each used to count as loaded after the first failure, so
// the replica enforced the old allowlist and ran the deleted integration
// until some later change came.
func TestAChangeThatFailedToLoadIsLoadedOnceItCan(t *testing.T) {
	for _, tc := range []struct {
		name, table string
		change      func(ctx context.Context, s *models.Store) error
		inForce     func(a *App) bool
	}{
		{
			name: "allowlist", table: "settings",
			change: func(ctx context.Context, s *models.Store) error {
				_, err := s.RemoveAllowlistEntries(ctx, models.AnyRevision, []string{"a.example.com"})
				return err
			},
			inForce: func(a *App) bool { return !a.Guard().Precheck("https://a.example.com/").Allowed },
		},
		{
			name: "integrations", table: "integrations",
			change: func(ctx context.Context, s *models.Store) error {
				_, err := s.DeleteIntegration(ctx, models.AnyRevision, "crm")
				return err
			},
			inForce: func(a *App) bool { return len(a.Integrations().List()) == 0 },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			path := filepath.Join(t.TempDir(), "console.db")
			other, err := models.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if _, err := other.AddAllowlistEntries(ctx, models.AnyRevision, []models.AllowlistEntry{{Entry: "a.example.com"}, {Entry: "b.example.com"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.CreateIntegration(ctx, models.AnyRevision, models.Integration{Name: "crm", Method: "GET", URLTemplate: "https://b.example.com/api/{id}"}); err != nil {
				t.Fatal(err)
			}
			a, err := Open(ctx, path, Options{Resolver: guardtest.NewResolver(), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if tc.inForce(a) {
				t.Fatal("the change is in force before it was made")
			}
			if err := tc.change(ctx, other); err != nil {
				t.Fatal(err)
			}
			stored, err := other.Revision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			raw := openOther(t, path, "_busy_timeout=5000")
			defer raw.Close()
			if _, err := raw.Exec("ALTER TABLE " + tc.table + " RENAME TO " + tc.table + "_away"); err != nil {
				t.Fatal(err)
			}
			// The watch starts from the revision Open loaded, so its first
			// poll sees the change.
			go a.Watch(ctx)
			// The first poll (within 250 ms) sees the change and fails to
			// load it; a few more polls retry it.
			for deadline := time.Now().Add(10 * time.Second); a.ReloadStatus().FailingSince.IsZero(); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("10 s after the change the watch has not tried to load it")
				}
			}
			time.Sleep(600 * time.Millisecond)
			if tc.inForce(a) || a.ReloadStatus().Revision == stored {
				t.Fatalf("the change counts as loaded while its table is away (revision %d of %d)", a.ReloadStatus().Revision, stored)
			}
			if st := a.ReloadStatus(); st.FailingSince.IsZero() || !strings.Contains(st.ReloadError, "no such table") {
				t.Fatalf("while failing, the reload status says failing since %v, error %q", st.FailingSince, st.ReloadError)
			}
			if _, err := raw.Exec("ALTER TABLE " + tc.table + "_away RENAME TO " + tc.table); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(3 * time.Second)
			for !(tc.inForce(a) && a.ReloadStatus().Revision == stored) {
				if time.Now().After(deadline) {
					t.Fatalf("3 s after the table came back the change is not in force: revision %d, stored %d", a.ReloadStatus().Revision, stored)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if st := a.ReloadStatus(); !st.FailingSince.IsZero() || st.ReloadError != "" {
				t.Errorf("after the change loaded, the reload status still says failing since %v: %q", st.FailingSince, st.ReloadError)
			}
		})
	}
}
