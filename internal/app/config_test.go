package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/models"
)

// testApp is an App over a temporary database whose resolver is a table,
// counting its reloads.
type testApp struct {
	*App
	resolver *guardtest.Resolver
	reloads  *atomic.Int32
}

func openTestApp(t *testing.T) testApp {
	t.Helper()
	ta := testApp{resolver: guardtest.NewResolver(), reloads: new(atomic.Int32)}
	a, err := Open(context.Background(), filepath.Join(t.TempDir(), "console.db"), Options{
		Resolver: ta.resolver, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: noEnv,
		OnReload: func(error) { ta.reloads.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ta.App = a
	ta.reloads.Store(0)
	return ta
}

// audits is the audit trail, oldest first.
func (ta testApp) audits(t *testing.T) []models.Audit {
	t.Helper()
	rows, _, err := ta.store.ListAudit(context.Background(), 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]models.Audit, len(rows))
	for i, r := range rows {
		out[len(rows)-1-i] = r
	}
	return out
}

// unchanged asserts that a refused operation stored, audited and reloaded
// nothing: the revision, the audit trail and the reload count are as
// they were before it.
func (ta testApp) unchanged(t *testing.T, rev int64, audits int, reloads int32) {
	t.Helper()
	if got, _ := ta.store.Revision(context.Background()); got != rev {
		t.Errorf("the revision moved from %d to %d", rev, got)
	}
	if got := len(ta.audits(t)); got != audits {
		t.Errorf("%d audit records, want %d: a refused change was recorded", got, audits)
	}
	if got := ta.reloads.Load(); got != reloads {
		t.Errorf("%d reloads, want %d", got, reloads)
	}
}

func (ta testApp) snapshot(t *testing.T) (int64, int, int32) {
	t.Helper()
	rev, err := ta.store.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rev, len(ta.audits(t)), ta.reloads.Load()
}

func TestStoreErrorsBecomeTyped(t *testing.T) {
	tests := []struct {
		name   string
		in     error
		target any
	}{
		{"conflict", &models.ConflictError{Section: models.SectionSettings, Expected: 1, Current: 3}, new(*ConflictError)},
		{"duplicate", &models.DuplicateError{Kind: "integration", Value: "x"}, new(*DuplicateError)},
		{"not found", &models.NotFoundError{Kind: "integration", Value: "x"}, new(*NotFoundError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := storeError(tt.in)
			if !errors.As(got, tt.target) {
				t.Fatalf("storeError(%T) = %T", tt.in, got)
			}
		})
	}
	var ce *ConflictError
	if errors.As(storeError(tests[0].in), &ce); ce.Current != 3 || ce.Section != models.SectionSettings || !errors.Is(ce, models.ErrConflict) {
		t.Fatalf("the conflict lost its versions: %+v", ce)
	}
}
