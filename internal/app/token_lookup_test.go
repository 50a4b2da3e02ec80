package app

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/testwait"
	"github.com/outboundhq/outbound/models"
)

// Many verifications of one token that miss the cache together ask the
// store once, and all get its answer.
func TestTokenCacheMissesOfOneTokenShareOneLookup(t *testing.T) {
	var l tokenLookups
	sum := tokenSum("obt_secret")
	var asked atomic.Int32
	release := make(chan struct{})
	find := func() (models.AgentToken, error) {
		asked.Add(1)
		<-release
		return models.AgentToken{ID: 7, Name: "bot"}, nil
	}
	const callers = 32
	var started, done sync.WaitGroup
	names := make([]string, callers)
	for i := range callers {
		started.Add(1)
		done.Go(func() {
			started.Done()
			tok, err := l.do(context.Background(), sum, 0, find)
			if err != nil {
				t.Error(err)
			}
			names[i] = tok.Name
		})
	}
	started.Wait()
	testwait.Until(t, "one lookup asks and the others wait for it", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, f := range l.flying {
			return f.waiters == callers-1
		}
		return false
	})
	close(release)
	done.Wait()
	if n := asked.Load(); n != 1 {
		t.Fatalf("%d callers missing the cache together asked the store %d times, want once", callers, n)
	}
	for i, name := range names {
		if name != "bot" {
			t.Fatalf("caller %d got %q, want the shared answer", i, name)
		}
	}
	if len(l.flying) != 0 {
		t.Fatalf("%d lookups left behind", len(l.flying))
	}
}

// A verification that starts after a revocation cleared the cache (a
// newer generation) does not take the answer of a lookup that began
// before it: it asks the store itself.
func TestATokenLookupFromBeforeARevocationIsNotShared(t *testing.T) {
	var l tokenLookups
	sum := tokenSum("obt_secret")
	release := make(chan struct{})
	var early sync.WaitGroup
	early.Go(func() {
		tok, err := l.do(context.Background(), sum, 0, func() (models.AgentToken, error) {
			<-release
			return models.AgentToken{Name: "bot"}, nil // read before the revocation
		})
		if err != nil || tok.Name != "bot" {
			t.Errorf("the early lookup: %v, %v", tok, err)
		}
	})
	testwait.Until(t, "a lookup is in flight", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.flying) == 1 })
	answered := make(chan error, 1)
	go func() {
		_, err := l.do(context.Background(), sum, 1, func() (models.AgentToken, error) {
			return models.AgentToken{}, models.ErrNotFound // the revocation is committed
		})
		answered <- err
	}()
	var err error
	select {
	case err = <-answered:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("a verification after the revocation waited for the lookup from before it")
	}
	if !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a verification after the revocation got %v, want the store's own answer (not found)", err)
	}
	close(release)
	early.Wait()
}

// When the caller whose lookup is shared gives up (its request ended),
// the others ask again rather than fail with its context's error; a
// caller that gives up itself stops waiting at once.
func TestASharedTokenLookupCancelledByItsCallerIsAskedAgain(t *testing.T) {
	var l tokenLookups
	sum := tokenSum("obt_secret")
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	var asked atomic.Int32
	var leader sync.WaitGroup
	leader.Go(func() {
		_, err := l.do(leaderCtx, sum, 0, func() (models.AgentToken, error) {
			asked.Add(1)
			<-leaderCtx.Done()
			return models.AgentToken{}, leaderCtx.Err()
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the leader got %v, want its own cancellation", err)
		}
	})
	testwait.Until(t, "a lookup is in flight", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.flying) == 1 })

	gaveUp, give := context.WithCancel(context.Background())
	give()
	if _, err := l.do(gaveUp, sum, 0, func() (models.AgentToken, error) {
		t.Error("a caller that gave up asked the store")
		return models.AgentToken{}, nil
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled waiter got %v", err)
	}

	got := make(chan error, 1)
	go func() {
		tok, err := l.do(context.Background(), sum, 0, func() (models.AgentToken, error) {
			asked.Add(1)
			return models.AgentToken{Name: "bot"}, nil
		})
		if err == nil && tok.Name != "bot" {
			err = errors.New("wrong token " + tok.Name)
		}
		got <- err
	}()
	testwait.Until(t, "the waiter joined the leader's lookup", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		f := l.flying[sum]
		return f != nil && f.waiters == 1
	})
	cancelLeader()
	leader.Wait()
	if err := <-got; err != nil {
		t.Fatalf("the waiter of a cancelled lookup: %v, want the store's answer from asking again", err)
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("the store was asked %d times, want twice (the cancelled lookup, then the waiter's own)", n)
	}
}

// A lookup that panics is settled all the same: the next verification
// of the token asks the store rather than wait for it for ever.
func TestAPanickingTokenLookupLeavesNothingBehind(t *testing.T) {
	var l tokenLookups
	sum := tokenSum("obt_secret")
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the lookup's panic was swallowed")
			}
		}()
		_, _ = l.do(context.Background(), sum, 0, func() (models.AgentToken, error) { panic("driver bug") })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tok, err := l.do(ctx, sum, 0, func() (models.AgentToken, error) { return models.AgentToken{Name: "bot"}, nil })
	if err != nil || tok.Name != "bot" {
		t.Fatalf("after a panicking lookup: %v, %v; want the store asked again", tok, err)
	}
}
