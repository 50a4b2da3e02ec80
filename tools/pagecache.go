package tools

import (
	"container/list"
	"sync"
	"time"

	"github.com/outboundhq/outbound/tools/extract"
)

// cachedPage is a page as fetch_url extracted it, kept so that reading on
// (start > 0) serves the next part without fetching again.
type cachedPage struct {
	requested string   // the URL as the agent asked for it, normalised
	final     string   // the URL after redirects
	redirects []string // the hops that redirected, oldest first
	status    int
	page      extract.Page
	runes     int // length of page.Text in characters
	stored    time.Time
}

func (p *cachedPage) size() int { return len(p.page.Text) + len(p.page.Title) + 256 }

// pageCache is a bounded LRU with a time to live. It bounds both the
// number of pages and the bytes of text they hold, so a run of huge pages
// cannot grow it past its budget.
type pageCache struct {
	mu       sync.Mutex
	ll       *list.List // front: most recently used
	byURL    map[string]*list.Element
	bytes    int
	maxPages int
	maxBytes int
}

func newPageCache(maxPages, maxBytes int) *pageCache {
	return &pageCache{ll: list.New(), byURL: map[string]*list.Element{}, maxPages: maxPages, maxBytes: maxBytes}
}

// get returns the page cached for url if it is younger than ttl.
func (c *pageCache) get(url string, ttl time.Duration, now time.Time) (*cachedPage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byURL[url]
	if !ok {
		return nil, false
	}
	p := el.Value.(*cachedPage)
	if ttl <= 0 || now.Sub(p.stored) >= ttl {
		c.removeLocked(el)
		return nil, false
	}
	c.ll.MoveToFront(el)
	return p, true
}

func (c *pageCache) put(p *cachedPage) {
	if p.size() > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byURL[p.requested]; ok {
		c.removeLocked(el)
	}
	c.byURL[p.requested] = c.ll.PushFront(p)
	c.bytes += p.size()
	for c.ll.Len() > c.maxPages || c.bytes > c.maxBytes {
		c.removeLocked(c.ll.Back())
	}
}

func (c *pageCache) drop(url string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byURL[url]; ok {
		c.removeLocked(el)
	}
}

func (c *pageCache) removeLocked(el *list.Element) {
	p := c.ll.Remove(el).(*cachedPage)
	delete(c.byURL, p.requested)
	c.bytes -= p.size()
}

func (c *pageCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
