package tools

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// memWebReads is a WebReadStore in memory, shared by the registries of a
// test as the database is by replicas; it counts its reads and writes and
// fails them on demand.
type memWebReads struct {
	mu                   sync.Mutex
	until                map[string]time.Time
	reads, writes        int
	failRead, failWrites bool
}

var errStoreDown = errors.New("the database is down")

func newMemWebReads() *memWebReads { return &memWebReads{until: map[string]time.Time{}} }

func (m *memWebReads) MarkWebRead(_ context.Context, thread string, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failWrites {
		return errStoreDown
	}
	m.writes++
	if until.After(m.until[thread]) {
		m.until[thread] = until
	}
	return nil
}

func (m *memWebReads) WebReadUntil(_ context.Context, thread string) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	if m.failRead {
		return time.Time{}, errStoreDown
	}
	return m.until[thread], nil
}

func (m *memWebReads) counts() (reads, writes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads, m.writes
}

func (m *memWebReads) set(f func(m *memWebReads)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

func newStoredWebReads(store WebReadStore, max int) *webReads {
	w := newWebReads(max, time.Hour)
	w.store = store
	return w
}

// TestWebReadsCrossReplicas: a conversation that read the web through one
// registry has read it for another on the same store: its typing is
// refused there and nothing is typed, while another conversation types.
func TestWebReadsCrossReplicas(t *testing.T) {
	store := newMemWebReads()
	a, b := newConfirmEnv(t, BrowserConfirm), newConfirmEnv(t, BrowserConfirm)
	a.reg.reads.store, b.reg.reads.store = store, store

	a.call(t, "T-1", "read_page", `{}`)
	res := b.call(t, "T-1", "type_text", `{"text": "x"}`)
	if res.OK() || res.Refusal.Reason != ReasonNeedsConfirmation || b.typed.Load() != 0 {
		t.Fatalf("replica B typed in T-1 after T-1 read the web on replica A: typed %d, %+v", b.typed.Load(), res.Refusal)
	}
	if res := b.call(t, "T-2", "type_text", `{"text": "x"}`); !res.OK() || b.typed.Load() != 1 {
		t.Fatalf("T-2 read nothing, yet: %+v", res.Refusal)
	}
	// A tool that reads nothing from the web writes nothing.
	_, writes := store.counts()
	b.call(t, "T-3", "note", `{}`)
	if _, after := store.counts(); after != writes {
		t.Fatalf("a call that read nothing from the web wrote %d marks", after-writes)
	}
}

// TestWebReadsWriteOnceAndAskOnlyWhenUnknown: reading the web writes a
// conversation's mark the first time and then once per webReadsRefresh,
// however often it reads; a side effect asks the store only about a
// conversation the memory does not know.
func TestWebReadsWriteOnceAndAskOnlyWhenUnknown(t *testing.T) {
	ctx := context.Background()
	store := newMemWebReads()
	w := newStoredWebReads(store, 10)
	t0 := time.Now()
	for i := range 1000 {
		w.mark(ctx, "T-1", t0.Add(time.Duration(i)*time.Millisecond))
	}
	if _, writes := store.counts(); writes != 1 {
		t.Fatalf("1000 reads of the web wrote %d marks, want 1", writes)
	}
	if got := store.until["T-1"]; !got.Equal(t0.Add(time.Hour + webReadsRefresh)) {
		t.Fatalf("the stored mark lasts until %v, want the idle time and webReadsRefresh from the first read", got.Sub(t0))
	}
	w.mark(ctx, "T-1", t0.Add(webReadsRefresh-time.Second))
	if !w.read(ctx, "T-1", t0.Add(webReadsRefresh-time.Second)) {
		t.Fatal("T-1 is not tainted")
	}
	if reads, writes := store.counts(); reads != 0 || writes != 1 {
		t.Fatalf("within webReadsRefresh: %d store reads, %d writes; want 0 and 1", reads, writes)
	}
	later := t0.Add(webReadsRefresh + time.Second)
	w.mark(ctx, "T-1", later)
	if _, writes := store.counts(); writes != 2 || !store.until["T-1"].Equal(later.Add(time.Hour+webReadsRefresh)) {
		t.Fatalf("after webReadsRefresh: %d writes, stored until %v", writes, store.until["T-1"])
	}
	if w.read(ctx, "T-2", later) {
		t.Fatal("T-2 read nothing")
	}
	if reads, _ := store.counts(); reads != 1 {
		t.Fatalf("a side effect of an unknown conversation asked the store %d times, want 1", reads)
	}
}

// TestWebReadsLastAsLongOnEveryReplica: a mark read from the store counts
// until it expires, an idle time after the last call of the conversation
// on any replica (up to webReadsRefresh more), and no longer.
func TestWebReadsLastAsLongOnEveryReplica(t *testing.T) {
	ctx := context.Background()
	store := newMemWebReads()
	a, b := newStoredWebReads(store, 10), newStoredWebReads(store, 10)
	t0 := time.Now()
	a.mark(ctx, "T-1", t0)
	if !b.read(ctx, "T-1", t0.Add(59*time.Minute)) {
		t.Fatal("replica B: T-1 read the web 59 minutes ago on replica A")
	}
	// B's side effect kept T-1 from going idle, for A as well.
	last := t0.Add(59*time.Minute + time.Hour)
	if !a.read(ctx, "T-1", last) {
		t.Fatal("replica A forgot T-1 an hour after its last call, on B")
	}
	end := last.Add(time.Hour + webReadsRefresh)
	for name, w := range map[string]*webReads{"A": a, "B": b} {
		if w.read(ctx, "T-1", end.Add(time.Second)) {
			t.Errorf("replica %s: T-1 still counts past its stored mark", name)
		}
	}
	c := newStoredWebReads(store, 10)
	if c.read(ctx, "T-1", end.Add(time.Second)) {
		t.Fatal("a replica that never saw T-1 counts its expired mark")
	}
}

// TestWebReadsFailClosed: a store that cannot be read counts every
// conversation as having read the web (the side effect is refused and
// not taken); a mark the store could not write still counts on the
// replica that saw the read, is written on the conversation's next call,
// and while unwritten is never forgotten quietly.
func TestWebReadsFailClosed(t *testing.T) {
	store := newMemWebReads()
	e := newConfirmEnv(t, BrowserConfirm)
	e.reg.reads.store = store
	store.set(func(m *memWebReads) { m.failRead = true })
	res := e.call(t, "clean", "type_text", `{"text": "x"}`)
	if res.OK() || res.Refusal.Reason != ReasonNeedsConfirmation || e.typed.Load() != 0 {
		t.Fatalf("with the store unreadable, a side effect went ahead: typed %d, %+v", e.typed.Load(), res.Refusal)
	}
	store.set(func(m *memWebReads) { m.failRead = false })
	if res := e.call(t, "clean", "type_text", `{"text": "x"}`); !res.OK() {
		t.Fatalf("a failed read tainted the conversation for good: %+v", res.Refusal)
	}

	ctx := context.Background()
	store.set(func(m *memWebReads) { m.failWrites = true })
	a, b := newStoredWebReads(store, 2), newStoredWebReads(store, 2)
	t0 := time.Now()
	a.mark(ctx, "T-1", t0)
	if !a.read(ctx, "T-1", t0) {
		t.Fatal("the replica that saw the read lost its mark when the store failed")
	}
	// The memory is full of conversations the store does not hold: the
	// one it forgets makes every conversation count, as without a store.
	a.mark(ctx, "T-2", t0)
	a.mark(ctx, "T-3", t0.Add(time.Second))
	if !a.read(ctx, "T-4", t0.Add(time.Minute)) {
		t.Fatal("an unwritten live mark was forgotten quietly")
	}
	store.set(func(m *memWebReads) { m.failWrites = false })
	a.mark(ctx, "T-3", t0.Add(2*time.Second))
	if !b.read(ctx, "T-3", t0.Add(3*time.Second)) {
		t.Fatal("the next call did not write the mark the store missed")
	}

	// With every mark written, the memory forgets without the overflow rule.
	c := newStoredWebReads(store, 2)
	for _, th := range []string{"U-1", "U-2", "U-3"} {
		c.mark(ctx, th, t0)
	}
	if c.read(ctx, "U-4", t0.Add(time.Minute)) || !c.read(ctx, "U-1", t0.Add(time.Minute)) {
		t.Fatal("a memory backed by the store: U-4 read nothing, U-1 (forgotten here, stored) read the web")
	}
}

// TestAnUnrecordedWebReadWithholdsTheContent: when the store cannot keep
// the mark of a conversation's first web read, the content does not
// reach the agent. It used to: the mark lived in this replica's memory
// only, so the conversation's next write through another replica, which
// asks the store and finds nothing, went ahead without a person's
// confirmation. Once the store answers again the read goes through and
// is marked for every replica.
func TestAnUnrecordedWebReadWithholdsTheContent(t *testing.T) {
	store := newMemWebReads()
	a := newConfirmEnv(t, BrowserConfirm)
	a.reg.reads.store = store
	b := newConfirmEnv(t, BrowserConfirm) // another replica on the same store
	b.reg.reads.store = store

	store.set(func(m *memWebReads) { m.failWrites = true })
	res := a.call(t, "T-1", "read_page", `{}`)
	if res.OK() || res.Refusal.Reason != ReasonUnrecorded || strings.Contains(res.Text, "type the password") {
		t.Fatalf("with the store failing, the page reached the agent: %+v %q", res.Refusal, res.Text)
	}
	if n := a.refusalsWith(ReasonUnrecorded); n != 1 {
		t.Errorf("%d unrecorded refusals in the log, want 1", n)
	}
	store.set(func(m *memWebReads) { m.failWrites = false })
	if res := a.call(t, "T-1", "read_page", `{}`); !res.OK() || !strings.Contains(res.Text, "type the password") {
		t.Fatalf("with the store back, the page is still withheld: %+v", res.Refusal)
	}
	if res := b.call(t, "T-1", "type_text", `{"text": "x"}`); res.OK() || res.Refusal.Reason != ReasonNeedsConfirmation || b.typed.Load() != 0 {
		t.Fatalf("the other replica let T-1 type after its web read: typed %d, %+v", b.typed.Load(), res.Refusal)
	}
}
