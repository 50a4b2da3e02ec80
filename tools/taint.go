package tools

import (
	"container/list"
	"sync"
	"time"
)

// A conversation that has read the web may be carrying a page's orders:
// a page can tell the model to type private text into a form or send it
// to an integration. So the registry remembers each conversation (its
// Turn.Thread: the MCP session, or the API's thread) that web content
// has entered, and from then on every side effect in it needs a person
// (ConfirmSideEffect).
//
// The memory is bounded, and forgetting must never make a conversation
// look clean while it still runs: a conversation is forgotten only after
// webReadsIdle without a call, longer than an MCP session lives; when the
// store is full of live conversations, it forgets the least recently
// used one and counts every conversation as having read the web until
// that one would have expired anyway.
const (
	webReadsIdle = 24 * time.Hour
	webReadsMax  = 50000
)

type webReads struct {
	mu       sync.Mutex
	ll       *list.List // of *webRead, most recently used first
	byThread map[string]*list.Element
	max      int
	idle     time.Duration
	// allUntil is when the overflow rule ends: until then every
	// conversation counts as having read the web.
	allUntil time.Time
}

type webRead struct {
	thread string
	last   time.Time
}

func newWebReads(max int, idle time.Duration) *webReads {
	return &webReads{ll: list.New(), byThread: map[string]*list.Element{}, max: max, idle: idle}
}

// mark records that web content entered thread's conversation.
func (w *webReads) mark(thread string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if el, ok := w.byThread[thread]; ok {
		el.Value.(*webRead).last = now
		w.ll.MoveToFront(el)
		return
	}
	w.byThread[thread] = w.ll.PushFront(&webRead{thread: thread, last: now})
	w.evictLocked(now)
}

// read reports whether web content has entered thread's conversation,
// and keeps a conversation that has read the web from going idle.
func (w *webReads) read(thread string, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.evictLocked(now)
	if el, ok := w.byThread[thread]; ok {
		el.Value.(*webRead).last = now
		w.ll.MoveToFront(el)
		return true
	}
	return now.Before(w.allUntil)
}

// evictLocked forgets idle conversations, then the least recently used
// ones while the store is over its size, raising allUntil for those.
func (w *webReads) evictLocked(now time.Time) {
	for el := w.ll.Back(); el != nil; el = w.ll.Back() {
		r := el.Value.(*webRead)
		idle := now.Sub(r.last) > w.idle
		if !idle && w.ll.Len() <= w.max {
			return
		}
		if until := r.last.Add(w.idle); !idle && until.After(w.allUntil) {
			w.allUntil = until
		}
		w.ll.Remove(el)
		delete(w.byThread, r.thread)
	}
}

func (w *webReads) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ll.Len()
}
