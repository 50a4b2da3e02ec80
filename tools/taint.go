package tools

import (
	"container/list"
	"context"
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
//
// Behind a load balancer a conversation's next call may reach another
// replica, so where the registry has a WebReadStore (the database every
// replica shares) the memory is a cache of it:
//
//   - a web read is written to the store the first time a conversation
//     reads the web, and again only when the stored mark would expire
//     within webReadsIdle (once per webReadsRefresh of a busy
//     conversation), never on every read;
//   - a side effect asks the store whenever the memory does not know the
//     conversation, so a mark made on any replica counts on every one;
//     a store that cannot be read counts the conversation as having read
//     the web (it errs towards asking);
//   - a mark the store could not keep still counts here, and is written
//     again on the conversation's next call; a live conversation the
//     memory forgets is covered by the store only when its stored mark
//     lasts as long, else by the overflow rule above.
const (
	webReadsIdle = 24 * time.Hour
	webReadsMax  = 50000
	// webReadsRefresh is how much longer than webReadsIdle a stored mark
	// lasts: a conversation that goes on reading is written again once
	// per webReadsRefresh, and its stored mark always outlasts the one in
	// the memory of the replica that wrote it.
	webReadsRefresh = 10 * time.Minute
	// webReadsWriteTimeout bounds a mark's write, which a call waits for.
	webReadsWriteTimeout = 5 * time.Second
)

// WebReadStore keeps, where every replica reads it, which conversations
// have read the web and until when they count as having read it. It logs
// its own failures: the registry only acts on them (a mark it could not
// write counts in memory; a read that failed counts as a web read).
type WebReadStore interface {
	// MarkWebRead records that thread has read the web, counting until
	// until; a later until already stored stays.
	MarkWebRead(ctx context.Context, thread string, until time.Time) error
	// WebReadUntil is until when thread counts as having read the web:
	// the zero time when no replica recorded it.
	WebReadUntil(ctx context.Context, thread string) (time.Time, error)
}

type webReads struct {
	// store is nil where the conversation is the process's own (the
	// command line, MCP over stdio): the memory is then all there is.
	store WebReadStore

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
	// stored is until when the store counts the conversation as having
	// read the web, as far as this process knows (zero: not stored).
	stored time.Time
}

func newWebReads(max int, idle time.Duration) *webReads {
	return &webReads{ll: list.New(), byThread: map[string]*list.Element{}, max: max, idle: idle}
}

// mark records that web content entered thread's conversation. It
// fails when the store could not keep a mark it had to write: the caller
// then withholds the content (Registry.Call), since another replica,
// asking the store, would let the conversation's next side effect go
// ahead unconfirmed.
func (w *webReads) mark(ctx context.Context, thread string, now time.Time) error {
	w.mu.Lock()
	if el, ok := w.byThread[thread]; ok {
		el.Value.(*webRead).last = now
		w.ll.MoveToFront(el)
	} else {
		w.byThread[thread] = w.ll.PushFront(&webRead{thread: thread, last: now})
		w.evictLocked(now)
	}
	due := w.dueLocked(thread, now)
	w.mu.Unlock()
	if due {
		return w.write(ctx, thread, now)
	}
	return nil
}

// read reports whether web content has entered thread's conversation,
// and keeps a conversation that has read the web from going idle.
func (w *webReads) read(ctx context.Context, thread string, now time.Time) bool {
	w.mu.Lock()
	w.evictLocked(now)
	if el, ok := w.byThread[thread]; ok {
		el.Value.(*webRead).last = now
		w.ll.MoveToFront(el)
		due := w.dueLocked(thread, now)
		w.mu.Unlock()
		if due {
			_ = w.write(ctx, thread, now) // it counts here either way
		}
		return true
	}
	all := now.Before(w.allUntil)
	w.mu.Unlock()
	if all || w.store == nil {
		return all
	}
	until, err := w.store.WebReadUntil(ctx, thread)
	if err != nil {
		return true // the store's error is logged by the store
	}
	if !now.Before(until) {
		return false
	}
	// Another replica saw the read: remember it here, and keep it from
	// going idle as a read here would.
	w.mu.Lock()
	el, ok := w.byThread[thread]
	if !ok {
		el = w.ll.PushFront(&webRead{thread: thread})
		w.byThread[thread] = el
	}
	r := el.Value.(*webRead)
	r.last = now
	if until.After(r.stored) {
		r.stored = until
	}
	w.ll.MoveToFront(el)
	w.evictLocked(now)
	due := w.dueLocked(thread, now)
	w.mu.Unlock()
	if due {
		_ = w.write(ctx, thread, now) // it counts here either way
	}
	return true
}

// dueLocked reports whether thread's stored mark would expire before the
// one in memory, which lasts until now+idle: it is then written again.
func (w *webReads) dueLocked(thread string, now time.Time) bool {
	if w.store == nil {
		return false
	}
	el, ok := w.byThread[thread]
	return ok && el.Value.(*webRead).stored.Before(now.Add(w.idle))
}

// write stores thread's mark, lasting webReadsRefresh longer than the
// memory's. The call waits for it, so the mark is there before the answer
// that carries the web content reaches the agent; the call's own end
// (a client gone) does not cut it short. A failed write leaves the mark
// in memory only (this replica still asks), is returned, and is tried
// again at the conversation's next call.
func (w *webReads) write(ctx context.Context, thread string, now time.Time) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), webReadsWriteTimeout)
	defer cancel()
	until := now.Add(w.idle + webReadsRefresh)
	if err := w.store.MarkWebRead(ctx, thread, until); err != nil {
		return err // logged by the store
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if el, ok := w.byThread[thread]; ok && until.After(el.Value.(*webRead).stored) {
		el.Value.(*webRead).stored = until
	}
	return nil
}

// evictLocked forgets idle conversations, then the least recently used
// ones while the store is over its size, raising allUntil for those the
// store does not cover.
func (w *webReads) evictLocked(now time.Time) {
	for el := w.ll.Back(); el != nil; el = w.ll.Back() {
		r := el.Value.(*webRead)
		idle := now.Sub(r.last) > w.idle
		if !idle && w.ll.Len() <= w.max {
			return
		}
		if until := r.last.Add(w.idle); !idle && until.After(w.allUntil) && r.stored.Before(until) {
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
