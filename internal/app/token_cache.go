package app

import (
	"sync"
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
// about every time. The zero value is ready to use.
type tokenCache struct {
	mu sync.RWMutex
	m  map[string]cachedToken
}

type cachedToken struct {
	id    int64
	name  string
	until time.Time
}

func (c *tokenCache) get(hash string, now time.Time) (cachedToken, bool) {
	c.mu.RLock()
	t, ok := c.m[hash]
	c.mu.RUnlock()
	return t, ok && now.Before(t.until)
}

func (c *tokenCache) put(hash string, id int64, name string, now time.Time) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTokens {
		c.m = make(map[string]cachedToken)
	}
	c.m[hash] = cachedToken{id: id, name: name, until: now.Add(tokenCacheFor)}
	c.mu.Unlock()
}

// clear forgets every token, after a revocation.
func (c *tokenCache) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}
