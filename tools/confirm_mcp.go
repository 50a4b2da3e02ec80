package tools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An MCP client that supports elicitation shows a person the question and
// returns their answer. The SDK carries it the multi-round-trip way: the
// tool call ends with an input request, the answer comes back with the
// call's retry (for older clients the SDK asks and retries itself). So a
// question has a one-time id the server remembers, bound to the exact
// action and conversation: an answer counts once, for that action only,
// and a client cannot confirm ahead of being asked.
const (
	askTTL = 15 * time.Minute // how long a person may take to answer
	askMax = 10000
)

// asks are the questions on their way to a person, by id: what they ask
// about (a digest of the conversation and the action) and until when.
type asks struct {
	mu   sync.Mutex
	byID map[string]askedAbout
}

type askedAbout struct {
	action  [32]byte
	expires time.Time
}

func newAsks() *asks { return &asks{byID: map[string]askedAbout{}} }

// actionDigest names one action in one conversation.
func actionDigest(thread string, a SideEffect) [32]byte {
	h := sha256.New()
	for _, s := range []string{thread, a.Tool, a.Where, a.What} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// open remembers a new question about action and returns its id.
func (q *asks) open(action [32]byte, now time.Time) string {
	var b [16]byte
	rand.Read(b[:])
	id := "confirm-" + hex.EncodeToString(b[:])
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.byID) >= askMax {
		for k, v := range q.byID {
			if now.After(v.expires) {
				delete(q.byID, k)
			}
		}
		if len(q.byID) >= askMax {
			clear(q.byID) // unanswered questions are asked again
		}
	}
	q.byID[id] = askedAbout{action: action, expires: now.Add(askTTL)}
	return id
}

// take consumes the question id if it asked about action and is still
// open: each answer counts once.
func (q *asks) take(id string, action [32]byte, now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	v, ok := q.byID[id]
	if !ok || v.action != action {
		return false
	}
	delete(q.byID, id)
	return now.Before(v.expires)
}

// mcpConfirmer is one tool call's Confirmer over MCP.
type mcpConfirmer struct {
	asks    *asks
	now     func() time.Time
	thread  string
	can     bool
	answers mcp.InputResponseMap

	mu    sync.Mutex
	asked mcp.InputRequestMap
}

func newMCPConfirmer(q *asks, now func() time.Time, thread string, req *mcp.CallToolRequest) *mcpConfirmer {
	c := &mcpConfirmer{asks: q, now: now, thread: thread}
	if caps := req.ClientCapabilities(); caps != nil && caps.Elicitation != nil {
		// An empty elicitation capability means forms (older clients).
		c.can = caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
	}
	if req.Params != nil {
		c.answers = req.Params.InputResponses
	}
	return c
}

func (c *mcpConfirmer) confirm(_ context.Context, a SideEffect) Confirmation {
	if !c.can {
		return Confirmation{Answer: Unasked,
			Why: "This MCP client cannot ask a person (it does not support MCP elicitation).",
			Fix: "Tell the person this step needs their confirmation: they can do it themselves, or connect through an MCP client that supports elicitation, which asks them to confirm each step."}
	}
	action := actionDigest(c.thread, a)
	now := c.now()
	for id, answer := range c.answers {
		res, ok := answer.(*mcp.ElicitResult)
		if !ok || !c.asks.take(id, action, now) {
			continue
		}
		if res.Action == "accept" {
			return Confirmation{Answer: Accepted}
		}
		return Confirmation{Answer: Declined}
	}
	id := c.asks.open(action, now)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asked == nil {
		c.asked = mcp.InputRequestMap{}
	}
	c.asked[id] = &mcp.ElicitParams{
		Mode:            "form",
		Message:         ConfirmationQuestion(a),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
	return Confirmation{Answer: Pending}
}

// requests are the questions this call asked.
func (c *mcpConfirmer) requests() mcp.InputRequestMap {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked
}
