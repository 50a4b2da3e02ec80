package tools

import (
	"container/list"
	"sync"

	"github.com/outboundhq/outbound/guard"
)

// Turn identifies one agent turn: the agent (its token's name), the
// conversation thread, and what triggered the turn (a ticket message, an
// event). reads_per_turn caps the new pages one turn may read, so that a
// ticket full of links cannot make an agent crawl.
type Turn struct {
	Agent   string
	Thread  string
	Trigger string
	// Ticket is the help-desk ticket the call serves, when the agent says.
	Ticket string
	// PublicOnly decides as guard.Caller.PublicOnly: set by the console's
	// safe preview for a person, never from anything an agent sends.
	PublicOnly bool
}

// caller is who the guard decides and records a call of tool in turn as:
// the one place a Turn becomes a guard.Caller.
func (t Turn) caller(tool string) guard.Caller {
	return guard.Caller{Tool: tool, Agent: t.Agent, Thread: t.Thread, Trigger: t.Trigger, Ticket: t.Ticket, PublicOnly: t.PublicOnly}
}

// turnBudget counts the distinct pages each turn has read. Its map is an
// LRU bounded by maxTurns, so a flood of turns cannot grow it; a turn that
// falls out simply starts counting again, which errs towards letting the
// agent work.
type turnBudget struct {
	mu       sync.Mutex
	ll       *list.List
	byTurn   map[Turn]*list.Element
	maxTurns int
}

type turnReads struct {
	turn  Turn
	pages map[string]bool
}

func newTurnBudget(maxTurns int) *turnBudget {
	return &turnBudget{ll: list.New(), byTurn: map[Turn]*list.Element{}, maxTurns: maxTurns}
}

// admit records that turn reads page and reports whether it may: a page
// already read in this turn is always admitted (reading on is free); a new
// page is admitted while the turn has read fewer than limit pages. The
// second result is how many pages the turn has read.
func (b *turnBudget) admit(turn Turn, page string, limit int) (bool, int) {
	turn.Ticket = "" // a turn is one turn whatever tickets its calls name: varying it must not reset the count
	b.mu.Lock()
	defer b.mu.Unlock()
	el, ok := b.byTurn[turn]
	if !ok {
		el = b.ll.PushFront(&turnReads{turn: turn, pages: map[string]bool{}})
		b.byTurn[turn] = el
		for b.ll.Len() > b.maxTurns {
			old := b.ll.Remove(b.ll.Back()).(*turnReads)
			delete(b.byTurn, old.turn)
		}
	}
	b.ll.MoveToFront(el)
	reads := el.Value.(*turnReads)
	if reads.pages[page] {
		return true, len(reads.pages)
	}
	if len(reads.pages) >= limit {
		return false, len(reads.pages)
	}
	reads.pages[page] = true
	return true, len(reads.pages)
}

// forget removes page from turn's count, for a read that failed before any
// text reached the agent.
func (b *turnBudget) forget(turn Turn, page string) {
	turn.Ticket = ""
	b.mu.Lock()
	defer b.mu.Unlock()
	if el, ok := b.byTurn[turn]; ok {
		delete(el.Value.(*turnReads).pages, page)
	}
}
