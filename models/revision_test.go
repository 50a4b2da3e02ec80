package models

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestConflictOnStaleVersion(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		// Two admins load the settings page at version 0; the first saves.
		if _, err := s.SetSettings(ctx, 0, "ana", map[string]string{"k": "ana"}); err != nil {
			t.Fatal(err)
		}
		// The allowlist is another section: a form for it loaded at version 0 is
		// not stale because the settings changed.
		if v, err := s.AddAllowlistEntries(ctx, 0, []AllowlistEntry{{Entry: "ana.example.com"}}); err != nil || v != 1 {
			t.Fatalf("an allowlist save after a settings save: %d, %v", v, err)
		}
		tests := []struct {
			name    string
			section Section
			call    func() (int64, error)
		}{
			{"settings", SectionSettings, func() (int64, error) { return s.SetSettings(ctx, 0, "bo", map[string]string{"k": "bo"}) }},
			{"add entries", SectionAllowlist, func() (int64, error) {
				return s.AddAllowlistEntries(ctx, 0, []AllowlistEntry{{Entry: "bo.example.com"}})
			}},
			{"remove entries", SectionAllowlist, func() (int64, error) { return s.RemoveAllowlistEntries(ctx, 0, []string{"ana.example.com"}) }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := tt.call()
				if !errors.Is(err, ErrConflict) {
					t.Fatalf("err = %v, want ErrConflict", err)
				}
				var ce *ConflictError
				if !errors.As(err, &ce) || ce.Section != tt.section || ce.Expected != 0 || ce.Current != 1 {
					t.Errorf("ConflictError = %+v, want %s, Expected 0, Current 1", ce, tt.section)
				}
				if !strings.Contains(err.Error(), "reload") || !strings.Contains(err.Error(), string(tt.section)) {
					t.Errorf("message %q does not name the section and tell the admin to reload", err)
				}
			})
		}
		if got, _ := s.Settings(ctx); got["k"] != "ana" {
			t.Errorf("stale save overwrote the first one: k = %q", got["k"])
		}
		if rev := mustRevision(t, s); rev != 2 {
			t.Errorf("the global revision is %d, want 2 (one per committed change, none for conflicts)", rev)
		}
		for sec, want := range map[Section]int64{SectionSettings: 1, SectionAllowlist: 1, SectionIntegrations: 0} {
			if v, err := s.Version(ctx, sec); err != nil || v != want {
				t.Errorf("Version(%s) = %d, %v; want %d", sec, v, err, want)
			}
		}
		// AnyRevision skips the check.
		if v, err := s.SetSettings(ctx, AnyRevision, "script", map[string]string{"k": "script"}); err != nil || v != 2 {
			t.Errorf("SetSettings(AnyRevision) = %d, %v; want 2, nil", v, err)
		}
	})
}

// Concurrent savers from the same revision: exactly one may win.
func TestConflictUnderConcurrentSaves(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		const n = 8
		errs := make(chan error, n)
		for i := range n {
			go func() {
				_, err := s.SetSettings(ctx, 0, "admin", map[string]string{"k": string(rune('a' + i))})
				errs <- err
			}()
		}
		wins := 0
		for range n {
			err := <-errs
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, ErrConflict):
				t.Errorf("unexpected error: %v", err)
			}
		}
		if wins != 1 {
			t.Errorf("%d saves from revision 0 succeeded, want exactly 1", wins)
		}
	})
}

func TestWatchSeesChangeFromSecondOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbound.db")
	watcher, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan int64, 10)
	stopped := make(chan error, 1)
	go func() { stopped <- watcher.Watch(ctx, 0, func(rev int64) error { changes <- rev; return nil }) }()

	// Let Watch read its starting revision before the change lands.
	time.Sleep(50 * time.Millisecond)
	if _, err := other.AddAllowlistEntries(context.Background(), AnyRevision, []AllowlistEntry{{Entry: "new.example.com"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case rev := <-changes:
		if rev != 1 {
			t.Errorf("Watch reported revision %d, want 1", rev)
		}
	case <-time.After(time.Second):
		t.Fatal("Watch did not report a change made through a second Open within 1s")
	}
	cancel()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("Watch returned %v after ctx ended, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not stop when its context ended")
	}
	if len(changes) != 0 {
		t.Errorf("Watch reported %d extra changes without any write", len(changes))
	}
}

func TestWatchErrors(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		t.Run("nil callback", func(t *testing.T) {
			s := openTestStore(t)
			if err := s.Watch(testCtx(t), 0, nil); err == nil {
				t.Fatal("want an error for a nil callback")
			}
		})
		t.Run("store closed while watching", func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "o.db"))
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- s.Watch(testCtx(t), 10*time.Millisecond, func(int64) error { return nil }) }()
			time.Sleep(30 * time.Millisecond)
			s.Close()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "closed") {
					t.Errorf("Watch returned %v, want an error saying the store was closed", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Watch kept running on a closed store")
			}
		})
	})
}

// TestWatchRetriesAChangeThatFailedToLoad: a revision whose onChange
// failed is offered again at the next poll, until a call succeeds, and
// then not again. It used to count as seen before onChange ran, so a
// reload that failed once (a failover between the poll and the reload)
// left the process on the old configuration until some later change.
func TestWatchRetriesAChangeThatFailedToLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbound.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := make(chan int64, 100)
	var failures atomic.Int32
	failures.Store(3)
	go func() {
		_ = s.WatchFrom(ctx, 5*time.Millisecond, 0, func(rev int64) error {
			calls <- rev
			if failures.Add(-1) >= 0 {
				return errors.New("the reload failed")
			}
			return nil
		})
	}()
	if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "new.example.com"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		select {
		case rev := <-calls:
			if rev != 1 {
				t.Fatalf("call %d was for revision %d, want 1", i+1, rev)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("after %d failed calls, Watch did not offer revision 1 again within 2s", i)
		}
	}
	// The fourth call succeeded: the revision is seen, and nothing more
	// is offered while it stays the stored one.
	time.Sleep(100 * time.Millisecond)
	if n := len(calls); n != 0 {
		t.Fatalf("Watch offered the revision %d more times after it loaded", n)
	}
}
