package app

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"time"
)

// tokenCacheFor is how long a verified token is trusted without asking
// the store again. Every agent request (API, MCP, proxy) verifies its
// token, and at thousands of requests a second the lookup was a query
// each; with the cache it is one per token per tokenCacheFor. A token
// revoked through this process is forgotten at once; one revoked by
// another process (the CLI, another replica) stops working within this
// bound, the bound every change across replicas keeps.
const tokenCacheFor = 100 * time.Millisecond

// maxCachedTokens bounds the cache: past it, it starts again empty.
const maxCachedTokens = 10_000

// tokenCache maps tokens' hashes to the token they verified as, until a
// time. Only tokens the store knew are cached: an unknown token is asked
// about every time. The key is the hash's bytes, not the token: the
// process keeps no agent's secret past its request. A sync.Map, because
// every agent request reads it and a reader takes no lock (an RWMutex's
// read lock is a write to one word that all cores share); it is written
// once per token per tokenCacheFor. The zero value is ready to use.
type tokenCache struct {
	m   sync.Map      // [sha256.Size]byte → *cachedToken
	n   atomic.Int64  // entries stored since the last clear
	gen atomic.Uint64 // clears so far: see put
}

type cachedToken struct {
	id    int64
	name  string
	until time.Time
}

func (c *tokenCache) get(hash [sha256.Size]byte, now time.Time) (*cachedToken, bool) {
	v, ok := c.m.Load(hash)
	if !ok {
		return nil, false
	}
	t := v.(*cachedToken)
	return t, now.Before(t.until)
}

// generation is read before the store is asked about a token, and
// handed to put with the answer.
func (c *tokenCache) generation() uint64 { return c.gen.Load() }

// put keeps what the store said about a token, unless the cache was
// cleared since gen was read: a revocation that committed after the
// store's answer was read, and cleared the cache before this put, would
// otherwise see the token it revoked cached again, live for up to
// tokenCacheFor in the very process that revoked it.
func (c *tokenCache) put(hash [sha256.Size]byte, id int64, name string, now time.Time, gen uint64) {
	t := &cachedToken{id: id, name: name, until: now.Add(tokenCacheFor)}
	_, replaced := c.m.Swap(hash, t)
	if c.gen.Load() != gen {
		c.m.CompareAndDelete(hash, t)
		return
	}
	if !replaced && c.n.Add(1) > maxCachedTokens {
		c.clear()
	}
}

// clear forgets every token, after a revocation. The generation moves
// first, so a put racing with it either sees the move or is cleared.
func (c *tokenCache) clear() {
	c.gen.Add(1)
	c.m.Clear()
	c.n.Store(0)
}
