package models

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A purge yields between chunks as long as the chunk took, at most a
// second, and stops at once when its context ends.
func TestPurgePauseMatchesTheChunkAndStopsWithItsContext(t *testing.T) {
	start := time.Now()
	if err := purgePause(context.Background(), 40*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Errorf("paused %v after a 40 ms chunk, want at least as long", waited)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start = time.Now()
	if err := purgePause(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < time.Second || waited > 1400*time.Millisecond {
		t.Errorf("paused %v after an hour-long chunk, want the one-second cap", waited)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	if err := purgePause(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > 100*time.Millisecond {
		t.Errorf("a cancelled purge's pause = %v after %v, want context.Canceled at once", err, time.Since(start))
	}
}
