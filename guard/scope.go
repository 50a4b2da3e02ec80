package guard

import (
	"slices"
	"strconv"
	"strings"
)

// Scope limits a Rule to some callers: the agents it names (Caller.Agent)
// and the tools it names (Caller.Tool, or Caller.Service for one named
// service behind a tool). An empty list means every agent, or every tool.
// The zero Scope covers every caller: the default scope.
type Scope struct {
	Agents []string `json:"agents,omitempty"`
	Tools  []string `json:"tools,omitempty"`
}

// IsZero reports whether s covers every caller.
func (s Scope) IsZero() bool { return len(s.Agents) == 0 && len(s.Tools) == 0 }

// Covers reports whether a request by c falls under s.
func (s Scope) Covers(c Caller) bool {
	if len(s.Agents) > 0 && !slices.Contains(s.Agents, c.Agent) {
		return false
	}
	if len(s.Tools) > 0 && !slices.Contains(s.Tools, c.Tool) && (c.Service == "" || !slices.Contains(s.Tools, c.Service)) {
		return false
	}
	return true
}

// Normalized returns s with its lists trimmed, sorted and without
// repeats, so that two spellings of one scope compare equal (Key).
func (s Scope) Normalized() Scope {
	norm := func(in []string) []string {
		var out []string
		for _, v := range in {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return Scope{Agents: norm(s.Agents), Tools: norm(s.Tools)}
}

// Key is a canonical text of the normalized scope: "" for the default
// scope. Two rules of one entry in one scope have the same key, which is
// what a store keeps unique.
func (s Scope) Key() string {
	n := s.Normalized()
	if n.IsZero() {
		return ""
	}
	return "agents=" + strings.Join(n.Agents, ",") + ";tools=" + strings.Join(n.Tools, ",")
}

// String says who the scope covers, for people: "every agent, every tool",
// "agents a, b; tools fetch_url".
func (s Scope) String() string {
	n := s.Normalized()
	who := "every agent"
	if len(n.Agents) > 0 {
		who = plural(len(n.Agents), "agent") + " " + strings.Join(n.Agents, ", ")
	}
	with := "every tool"
	if len(n.Tools) > 0 {
		with = plural(len(n.Tools), "tool") + " " + strings.Join(n.Tools, ", ")
	}
	return who + "; " + with
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Rule is an allowlist entry with the callers it applies to and how.
//
// A rule that is not Internal narrows its scope: once one applies, the
// scope reaches only the hosts its rules list (allowlist mode); a scope no
// such rule applies to reaches the public web. An Internal rule only
// widens: it lets its scope reach the named host, private addresses
// included, and leaves the public web as it was. It must be literal: a
// wildcard never reaches private addresses, in any scope.
//
// A ReportOnly rule is tried, not enforced: a request it would have
// refused is allowed, and its Decision and Record carry WouldRefuse. It
// never lets anything through that the enforced rules refuse, so the
// floor (loopback, private, metadata addresses) is never report-only.
type Rule struct {
	Entry      Entry
	Scope      Scope
	Internal   bool
	ReportOnly bool
}

// String is the rule as text, for errors: the entry and, when narrowed,
// its scope.
func (r Rule) String() string {
	s := r.Entry.String()
	if !r.Scope.IsZero() {
		s += " (" + r.Scope.String() + ")"
	}
	return s
}

// checkRule refuses a rule the policy cannot honour.
func checkRule(i int, r Rule) error {
	if r.Entry.IsZero() {
		return &EntryError{Line: i + 1, Problem: "the entry is empty", Fix: "remove it"}
	}
	if r.Internal && r.Entry.wildcard {
		return &EntryError{Line: i + 1, Input: r.Entry.String(), Problem: "an internal host must be one named host, not a wildcard",
			Fix: "list each internal host literally, e.g. " + strings.TrimPrefix(r.Entry.String(), "*.") + "; a wildcard never reaches private addresses"}
	}
	if r.Internal && r.ReportOnly {
		return &EntryError{Line: i + 1, Input: r.Entry.String(), Problem: "an internal host only widens access, so it cannot run report-only",
			Fix: "add it enforced; report-only is for entries that narrow a scope"}
	}
	return nil
}

// view is what one kind of caller may reach: the lists of the rules that
// apply to it, whether they narrow it to allowlist mode, and the same with
// its report-only rules (trial), when it has any.
type view struct {
	// lists are the default scope's list, shared by every view, and the
	// merged list of the scoped rules that apply (nil when none do).
	lists  [2]*Allowlist
	narrow bool
	// internal counts the internal rules that apply, for the card.
	internal int
	listed   int
	trial    *view
}

// match is Allowlist.match over both lists: a literal entry wins over a
// wildcard and a longer wildcard over a shorter one, whichever list holds
// it, so a scope only ever adds to what the default scope admits.
func (v *view) match(h host, port uint16, portOpen bool) (Entry, bool) {
	e, listed := v.lists[0].match(h, port, portOpen)
	if v.lists[1] != nil {
		e2, listed2 := v.lists[1].match(h, port, portOpen)
		if better(e2, e) {
			e = e2
		}
		listed = listed || listed2
	}
	return e, listed
}

// better reports whether a admits more specifically than b.
func better(a, b Entry) bool {
	switch {
	case a.IsZero():
		return false
	case b.IsZero():
		return true
	case a.wildcard != b.wildcard:
		return !a.wildcard
	}
	return len(a.name) > len(b.name)
}

// scopes indexes the views by caller. Every agent and tool a rule names
// gets a number (0: any other); the view of an (agent, tool) pair is
// built with the policy, so a decision costs two map lookups. A caller
// naming a Service that a rule names too gets its view built once, on
// first use.
type scopes struct {
	agents map[string]int
	tools  map[string]int
	nTools int // len(tools)+1
	views  []*view
	lazy   lazyViews
	// build makes a view for a key: the policy's builder, kept for lazy views.
	build      func(agent, tool, service string) *view
	names      []string // tool names by number
	agentNames []string
}

func (s *scopes) viewFor(c Caller) *view {
	ai, ti := s.agents[c.Agent], s.tools[c.Tool]
	si := 0
	if c.Service != "" {
		si = s.tools[c.Service]
	}
	if si == 0 || si == ti {
		return s.views[ai*s.nTools+ti]
	}
	key := [3]int{ai, ti, si}
	return s.lazy.get(key, func() *view { return s.build(s.agentNames[ai], s.names[ti], s.names[si]) })
}

// viewKey is a view's rule set, so callers that the same rules apply to
// share one view.
func viewKey(idx []int) string {
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(',')
	}
	return b.String()
}
