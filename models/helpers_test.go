package models

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// openTestStore opens a fresh database in the test's temporary directory and
// closes it when the test ends.
func openTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "outbound.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// testCtx bounds every test so a deadlock fails instead of hanging the run.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustRevision(t testing.TB, s *Store) int64 {
	t.Helper()
	rev, err := s.Revision(testCtx(t))
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	return rev
}

func countRefusals(t testing.TB, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.r.Model(&Refusal{}).Count(&n).Error; err != nil {
		t.Fatalf("counting refusals: %v", err)
	}
	return n
}

func contextWithCancel(t testing.TB) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	return ctx, cancel
}
