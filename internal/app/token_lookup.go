package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"

	"github.com/outboundhq/outbound/models"
)

// tokenLookups lets the verifications of one token that miss the cache at
// the same moment share one lookup in the store. Every entry of the cache
// expires after tokenCacheFor, and an agent sending from 32 connections
// found its entry expired on all of them at once: 32 queries where one
// does, every tokenCacheFor, which the load test saw as 2% of the serving
// process's CPU on PostgreSQL at 6,000 requests a second.
//
// A lookup is shared only by verifications that read the same cache
// generation: one that starts after a revocation cleared the cache does
// not take an answer read before it (see tokenCache.put).
type tokenLookups struct {
	mu     sync.Mutex
	flying map[[sha256.Size]byte]*tokenLookup
}

type tokenLookup struct {
	gen  uint64
	done chan struct{} // closed when tok and err are set
	tok  models.AgentToken
	err  error
	// gaveUp says the caller that asked had given up (its context
	// ended) when the answer came: whatever the error says, it is no
	// answer for the others, who ask again.
	gaveUp  bool
	waiters int // callers waiting for this answer, less those who gave up (for tests)
}

// do returns find's answer for hash, asking find only when no lookup of
// hash under generation gen is under way, and otherwise waiting for that
// one's answer. A shared lookup whose caller had given up by its end is not
// taken as the answer: this caller asks again.
func (l *tokenLookups) do(ctx context.Context, hash [sha256.Size]byte, gen uint64, find func() (models.AgentToken, error)) (models.AgentToken, error) {
	for {
		l.mu.Lock()
		if f := l.flying[hash]; f != nil && f.gen == gen {
			f.waiters++
			l.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				l.mu.Lock()
				f.waiters--
				l.mu.Unlock()
				return models.AgentToken{}, ctx.Err()
			}
			if f.gaveUp && ctx.Err() == nil {
				continue // the caller that asked gave up, not the store
			}
			return f.tok, f.err
		}
		f := &tokenLookup{gen: gen, done: make(chan struct{})}
		if l.flying == nil {
			l.flying = map[[sha256.Size]byte]*tokenLookup{}
		}
		l.flying[hash] = f
		l.mu.Unlock()
		return l.ask(ctx, hash, f, find)
	}
}

// ask runs find for f and hands its answer to f's waiters. However find
// ends, a panic included, the lookup is settled and taken off the map:
// one left behind would hold every later verification of the token
// until its request gave up.
func (l *tokenLookups) ask(ctx context.Context, hash [sha256.Size]byte, f *tokenLookup, find func() (models.AgentToken, error)) (models.AgentToken, error) {
	f.err = errLookupUnfinished
	defer func() {
		f.gaveUp = ctx.Err() != nil
		l.mu.Lock()
		if l.flying[hash] == f {
			delete(l.flying, hash)
		}
		l.mu.Unlock()
		close(f.done)
	}()
	f.tok, f.err = find()
	return f.tok, f.err
}

// errLookupUnfinished is the answer of a lookup that panicked.
var errLookupUnfinished = errors.New("app: the token lookup did not finish")
