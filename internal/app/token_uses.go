package app

import (
	"context"
	"sync"
	"time"
)

// tokenUseFlushEvery is how often the last uses of agents' tokens are
// written. The console shows last use to the minute; the store writes a
// token at most once a minute anyway.
const tokenUseFlushEvery = 15 * time.Second

// tokenUses collects the last use of each token in memory. Verifying a
// token is on every agent request and must never wait for the database's
// write lock (a stall held every request for the 5 s busy timeout); the
// uses are written from the background instead, and a failed write is
// retried by the next round, never by a request.
type tokenUses struct {
	mu      sync.Mutex
	pending map[int64]time.Time
	stop    chan struct{}
	done    chan struct{}
}

func newTokenUses() *tokenUses {
	return &tokenUses{pending: map[int64]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// note records a use; it costs a map write.
func (u *tokenUses) note(id int64, at time.Time) {
	u.mu.Lock()
	if at.After(u.pending[id]) {
		u.pending[id] = at
	}
	u.mu.Unlock()
}

func (u *tokenUses) take() map[int64]time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.pending) == 0 {
		return nil
	}
	out := u.pending
	u.pending = map[int64]time.Time{}
	return out
}

// putBack returns uses a failed write did not store, unless newer ones
// arrived meanwhile.
func (u *tokenUses) putBack(uses map[int64]time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for id, at := range uses {
		if at.After(u.pending[id]) {
			u.pending[id] = at
		}
	}
}

// runTokenUses writes the collected uses every tokenUseFlushEvery until
// Close.
func (a *App) runTokenUses() {
	defer close(a.uses.done)
	t := time.NewTicker(tokenUseFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-a.uses.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), tokenUseFlushEvery)
			a.flushTokenUses(ctx)
			cancel()
		}
	}
}

// flushTokenUses writes the uses collected so far.
func (a *App) flushTokenUses(ctx context.Context) {
	uses := a.uses.take()
	if uses == nil {
		return
	}
	if err := a.store.TouchTokens(ctx, uses); err != nil {
		a.uses.putBack(uses)
		a.log.Warn("could not record when agents' tokens were last used; retrying in the background", "tokens", len(uses), "err", err)
	}
}

// closeTokenUses stops the background writer and writes the last uses,
// briefly: a last-use time is a hint, not worth holding up shutdown.
func (a *App) closeTokenUses() {
	if a.uses == nil {
		return
	}
	close(a.uses.stop)
	<-a.uses.done
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	a.flushTokenUses(ctx)
}
