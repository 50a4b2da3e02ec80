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
}

// do returns find's answer for hash, asking find only when no lookup of
// hash under generation gen is under way, and otherwise waiting for that
// one's answer. A shared lookup that ended with its own caller's context
// is not taken as the answer: this caller asks again.
func (l *tokenLookups) do(ctx context.Context, hash [sha256.Size]byte, gen uint64, find func() (models.AgentToken, error)) (models.AgentToken, error) {
	for {
		l.mu.Lock()
		if f := l.flying[hash]; f != nil && f.gen == gen {
			l.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return models.AgentToken{}, ctx.Err()
			}
			if f.err != nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) && ctx.Err() == nil {
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

		f.tok, f.err = find()
		l.mu.Lock()
		if l.flying[hash] == f {
			delete(l.flying, hash)
		}
		l.mu.Unlock()
		close(f.done)
		return f.tok, f.err
	}
}
