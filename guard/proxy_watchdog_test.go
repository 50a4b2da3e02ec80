package guard

import (
	"context"
	"testing"
	"time"
)

// A request silent for its timeout is cancelled, with errProxyTimeout,
// no sooner than the timeout and at most two ticks later; one whose body
// keeps moving is not, however long it lasts; one stopped is never
// cancelled; and the sweeper stops when nothing is in flight.
func TestWatchdogsCancelOnlyTheSilent(t *testing.T) {
	var s watchdogs
	const timeout = 200 * time.Millisecond
	watch := func() (*watchdog, context.Context) {
		ctx, cancel := context.WithCancelCause(context.Background())
		w := &watchdog{}
		s.start(w, cancel, timeout)
		return w, ctx
	}
	start := time.Now()
	_, silentCtx := watch()
	moving, movingCtx := watch()
	stopped, stoppedCtx := watch()
	s.stop(stopped)

	// Kicked every quarter of the timeout for three timeouts.
	kicked := make(chan time.Time)
	go func() {
		defer close(kicked)
		var last time.Time
		for end := time.Now().Add(3 * timeout); time.Now().Before(end); time.Sleep(timeout / 4) {
			last = time.Now()
			moving.kick()
			if movingCtx.Err() != nil {
				t.Errorf("a request whose body kept moving was cancelled after %v", time.Since(start))
				return
			}
		}
		kicked <- last
	}()

	<-silentCtx.Done()
	if took := time.Since(start); took < timeout || took > timeout+2*watchdogTick+100*time.Millisecond {
		t.Errorf("a silent request was cancelled after %v, want %v to %v", took, timeout, timeout+2*watchdogTick)
	}
	if context.Cause(silentCtx) != errProxyTimeout {
		t.Errorf("cause = %v, want errProxyTimeout", context.Cause(silentCtx))
	}
	lastKick, ok := <-kicked
	if !ok {
		return
	}
	<-movingCtx.Done()
	if quiet := time.Since(lastKick); quiet < timeout {
		t.Errorf("cancelled %v after its last piece of body, before the timeout of %v", quiet, timeout)
	}
	if stoppedCtx.Err() != nil {
		t.Errorf("a stopped watchdog cancelled its request")
	}

	deadline := time.Now().Add(time.Second)
	for {
		s.mu.Lock()
		sweeping := s.sweeping
		s.mu.Unlock()
		if !sweeping {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper still runs with nothing in flight")
		}
		time.Sleep(watchdogTick)
	}
}

// A watchdog started again after the sweeper stopped is swept again.
func TestWatchdogsSweepAgainAfterIdle(t *testing.T) {
	var s watchdogs
	for range 2 {
		ctx, cancel := context.WithCancelCause(context.Background())
		s.start(&watchdog{}, cancel, 50*time.Millisecond)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("not cancelled")
		}
		for deadline := time.Now().Add(time.Second); ; time.Sleep(watchdogTick) {
			s.mu.Lock()
			sweeping := s.sweeping
			s.mu.Unlock()
			if !sweeping {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the sweeper still runs with nothing in flight")
			}
		}
	}
}

// A piece of body that arrives while the sweeper waits for the lock
// (every request's start and stop take it) is dated when the sweeper
// sees it, not by a clock reading taken before the wait: the request is
// never cut before it has been silent for Timeout (found in review).
func TestWatchdogDatesAPieceWhenItIsSeen(t *testing.T) {
	var s watchdogs
	const timeout = 400 * time.Millisecond
	ctx, cancel := context.WithCancelCause(context.Background())
	w := &watchdog{}
	s.start(w, cancel, timeout)
	defer s.stop(w)
	time.Sleep(2 * watchdogTick) // the sweeper runs
	s.mu.Lock()
	time.Sleep(200 * time.Millisecond)
	w.kick()
	last := time.Now()
	s.mu.Unlock()
	<-ctx.Done()
	if quiet := time.Since(last); quiet < timeout {
		t.Fatalf("cut %v after the last piece of body; Timeout is %v", quiet, timeout)
	}
}
