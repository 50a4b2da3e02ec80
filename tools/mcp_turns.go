package tools

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/outboundhq/outbound/guard"
)

// MCP has no notion of an agent's turn, so the tools delimit one:
//
//   - The thread is the MCP session, written "mcp:" + its id, so that a
//     page can tell an opaque session id from a thread a person named.
//   - The ticket is the X-Outbound-Ticket header of the HTTP transport, or
//     the call's own "ticket" argument.
//   - A client that knows its turns sends "_meta": {"outbound/trigger": "…"}
//     with each call (a ticket message id, say); calls with the same
//     trigger are one turn.
//   - Otherwise a turn is a burst of calls: it ends when the session makes
//     no call for mcpTurnGap. Agents call tools in quick succession while
//     they answer, and wait for a person between answers.
const (
	mcpTurnGap     = 2 * time.Minute
	mcpTriggerMeta = "outbound/trigger"
	mcpMaxSessions = 10000
)

// MCPThreadPrefix begins the thread of every call over an MCP session.
const MCPThreadPrefix = "mcp:"

// SessionThread reports whether thread is an MCP session's (or stdio's):
// an id no person chose, which pages show only where nothing better, such
// as a ticket, names the conversation.
func SessionThread(thread string) bool {
	return thread == "stdio" || strings.HasPrefix(thread, MCPThreadPrefix)
}

type mcpTurns struct {
	mu       sync.Mutex
	sessions map[string]*mcpSessionTurn
}

type mcpSessionTurn struct {
	n    int
	last time.Time
}

func newMCPTurns() *mcpTurns { return &mcpTurns{sessions: map[string]*mcpSessionTurn{}} }

// turn returns the Turn of one tool call.
func (m *mcpTurns) turn(req *mcp.CallToolRequest, localAgent string, now time.Time) Turn {
	t := Turn{Agent: localAgent, Thread: "stdio"}
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		t.Agent = req.Extra.TokenInfo.UserID
	}
	if req.Session != nil && req.Session.ID() != "" {
		t.Thread = MCPThreadPrefix + req.Session.ID()
	}
	if req.Extra != nil && req.Extra.Header != nil {
		t.Ticket = req.Extra.Header.Get(guard.TicketHeader)
	}
	if req.Params != nil {
		if v, ok := req.Params.GetMeta()[mcpTriggerMeta].(string); ok && v != "" {
			t.Trigger = v
			return t
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.sessions[t.Thread]
	if !ok {
		if len(m.sessions) >= mcpMaxSessions {
			m.evictIdleLocked(now)
		}
		st = &mcpSessionTurn{}
		m.sessions[t.Thread] = st
	}
	if st.last.IsZero() || now.Sub(st.last) > mcpTurnGap {
		st.n++
	}
	st.last = now
	t.Trigger = fmt.Sprintf("mcp-turn-%d", st.n)
	return t
}

// evictIdleLocked forgets sessions idle for longer than a turn gap; their
// next call starts a new turn anyway. If none is idle, it forgets them all
// rather than grow without bound.
func (m *mcpTurns) evictIdleLocked(now time.Time) {
	for id, st := range m.sessions {
		if now.Sub(st.last) > mcpTurnGap {
			delete(m.sessions, id)
		}
	}
	if len(m.sessions) >= mcpMaxSessions {
		clear(m.sessions)
	}
}
