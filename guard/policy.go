package guard

import "sync"

// Policy is one immutable snapshot of what may be reached: the allowlist
// rules and the settings. The Guard swaps whole snapshots atomically, so a
// decision never sees half of a reload and the request path takes no lock.
//
// Rules may be scoped to some agents and tools (Scope). What each kind of
// caller may reach is worked out when the policy is built (a view per
// agent and tool the rules name), so a decision finds its caller's view
// with a map lookup and never walks the rules.
type Policy struct {
	// list is the default scope's enforced entries: what Allowlist
	// returns, and what a caller no scoped rule names is decided by.
	list     *Allowlist
	rules    []Rule
	base     *view
	scopes   *scopes // nil when no rule is scoped
	settings Settings
	// wording names the admin's controls in refusals' fixes.
	wording Wording
}

// NewPolicy validates the settings and builds the allowlist: every entry
// enforced, for every caller.
func NewPolicy(entries []Entry, s Settings) (*Policy, error) {
	rules := make([]Rule, len(entries))
	for i, e := range entries {
		rules[i] = Rule{Entry: e}
	}
	return NewPolicyRules(rules, s)
}

// NewPolicyRules validates the settings and the rules and builds the
// views of every scope they name. An entry repeated within one scope, an
// internal wildcard or an internal report-only rule is an *EntryError
// whose Line is the rule's 1-based position.
func NewPolicyRules(rules []Rule, s Settings) (*Policy, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	p := &Policy{rules: make([]Rule, len(rules))}
	seen := make(map[struct {
		e     Entry
		scope string
	}]bool, len(rules))
	var def, scoped []Rule
	for i, r := range rules {
		if err := checkRule(i, r); err != nil {
			return nil, err
		}
		r.Scope = r.Scope.Normalized()
		k := struct {
			e     Entry
			scope string
		}{r.Entry, r.Scope.Key()}
		if seen[k] {
			return nil, duplicateError(i+1, r.String())
		}
		seen[k] = true
		p.rules[i] = r
		if r.Scope.IsZero() {
			def = append(def, r)
		} else {
			scoped = append(scoped, r)
		}
	}
	defEnforced, defAll := newLayer(def, false), newLayer(def, true)
	p.list = defEnforced.list
	p.base = joinLayers(defEnforced, layer{}, defAll, layer{}, hasReportOnly(def))
	if len(scoped) > 0 {
		p.scopes = buildScopes(scoped, defEnforced, defAll, hasReportOnly(def))
	}
	s.ExtraPorts = append([]uint16(nil), s.ExtraPorts...)
	p.settings = s
	return p, nil
}

// Allowlist returns the default scope's enforced entries.
func (p *Policy) Allowlist() *Allowlist { return p.list }

// Settings returns a copy of the policy's settings.
func (p *Policy) Settings() Settings {
	s := p.settings
	s.ExtraPorts = append([]uint16(nil), s.ExtraPorts...)
	return s
}

// PublicWeb reports whether the default scope reaches the public web: no
// enforced rule of it narrows it to listed hosts.
func (p *Policy) PublicWeb() bool { return !p.base.narrow }

// Reach is what one caller may reach under a policy, as counts: how the
// console's card and `console check` word a scope's mode.
type Reach struct {
	// PublicWeb: no enforced narrowing rule applies, so any public host
	// on an open port may be reached.
	PublicWeb bool
	// Listed counts the enforced narrowing entries, Internal the internal
	// hosts, ReportOnly the rules being tried.
	Listed, Internal, ReportOnly int
	// TrialPublicWeb is PublicWeb once the report-only rules are enforced.
	TrialPublicWeb bool
}

// ReachOf says what c may reach: its scope's mode and counts.
func (p *Policy) ReachOf(c Caller) Reach {
	v := p.viewFor(c)
	r := Reach{PublicWeb: !v.narrow, Listed: v.listed, Internal: v.internal, TrialPublicWeb: !v.narrow}
	if v.trial != nil {
		r.TrialPublicWeb = !v.trial.narrow
		r.ReportOnly = v.trial.listed + v.trial.internal - v.listed - v.internal
	}
	return r
}

// RulesFor returns the rules that apply to c, in the policy's order.
func (p *Policy) RulesFor(c Caller) []Rule {
	var out []Rule
	for _, r := range p.rules {
		if r.Scope.Covers(c) {
			out = append(out, r)
		}
	}
	return out
}

// viewFor is the view c is decided by.
func (p *Policy) viewFor(c Caller) *view {
	if c.PublicOnly {
		return &view{lists: [2]*Allowlist{p.base.lists[0], nil}}
	}
	if p.scopes == nil {
		return p.base
	}
	return p.scopes.viewFor(c)
}

// layer is the list of some rules and what they add up to.
type layer struct {
	list             *Allowlist
	narrow           bool
	listed, internal int
}

// newLayer builds the list of rules' entries, the report-only ones too
// when withReportOnly. An entry named by two rules is listed once.
func newLayer(rules []Rule, withReportOnly bool) layer {
	var l layer
	seen := make(map[Entry]bool, len(rules))
	entries := make([]Entry, 0, len(rules))
	for _, r := range rules {
		if r.ReportOnly && !withReportOnly {
			continue
		}
		if r.Internal {
			l.internal++
		} else {
			l.narrow = true
			l.listed++
		}
		if !seen[r.Entry] {
			seen[r.Entry] = true
			entries = append(entries, r.Entry)
		}
	}
	l.list, _ = NewAllowlist(entries) // entries are unique and non-zero: no error
	return l
}

// joinLayers makes the view of a default layer and a scoped one, with its
// trial view when report-only rules apply.
func joinLayers(def, sc, defAll, scAll layer, trial bool) *view {
	mk := func(d, s layer) *view {
		v := &view{narrow: d.narrow || s.narrow, listed: d.listed + s.listed, internal: d.internal + s.internal}
		v.lists[0] = d.list
		if s.list.Len() > 0 {
			v.lists[1] = s.list
		}
		return v
	}
	v := mk(def, sc)
	if trial {
		v.trial = mk(defAll, scAll)
	}
	return v
}

func hasReportOnly(rules []Rule) bool {
	for _, r := range rules {
		if r.ReportOnly {
			return true
		}
	}
	return false
}

// buildScopes numbers the agents and tools the scoped rules name and
// builds the view of every (agent, tool) pair; callers the same rules
// apply to share one view.
func buildScopes(scoped []Rule, defEnforced, defAll layer, defTrial bool) *scopes {
	s := &scopes{agents: map[string]int{}, tools: map[string]int{}, names: []string{""}, agentNames: []string{""}}
	byAgent := map[int][]int{} // rules naming an agent, by agent number; 0: rules for every agent
	for i, r := range scoped {
		for _, a := range r.Scope.Agents {
			if s.agents[a] == 0 {
				s.agents[a] = len(s.agentNames)
				s.agentNames = append(s.agentNames, a)
			}
			byAgent[s.agents[a]] = append(byAgent[s.agents[a]], i)
		}
		if len(r.Scope.Agents) == 0 {
			byAgent[0] = append(byAgent[0], i)
		}
		for _, t := range r.Scope.Tools {
			if s.tools[t] == 0 {
				s.tools[t] = len(s.names)
				s.names = append(s.names, t)
			}
		}
	}
	s.nTools = len(s.names)
	shared := map[string]*view{}
	s.build = func(agent, tool, service string) *view {
		c := Caller{Agent: agent, Tool: tool, Service: service}
		var idx []int
		cand := byAgent[0]
		if a := s.agents[agent]; a != 0 {
			cand = mergeSorted(byAgent[a], byAgent[0])
		}
		for _, i := range cand {
			if scoped[i].Scope.Covers(c) {
				idx = append(idx, i)
			}
		}
		key := viewKey(idx)
		if v, ok := shared[key]; ok {
			return v
		}
		rules := make([]Rule, len(idx))
		for j, i := range idx {
			rules[j] = scoped[i]
		}
		v := joinLayers(defEnforced, newLayer(rules, false), defAll, newLayer(rules, true), defTrial || hasReportOnly(rules))
		shared[key] = v
		return v
	}
	s.views = make([]*view, len(s.agentNames)*s.nTools)
	for ai, a := range s.agentNames {
		for ti, t := range s.names {
			s.views[ai*s.nTools+ti] = s.build(a, t, "")
		}
	}
	// Lazy views are built later, concurrently: they get their own lock
	// around the shared map the builder uses.
	eager := s.build
	var mu sync.Mutex
	s.build = func(agent, tool, service string) *view {
		mu.Lock()
		defer mu.Unlock()
		return eager(agent, tool, service)
	}
	return s
}

// mergeSorted merges two ascending index lists without repeats.
func mergeSorted(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// lazyViews holds the views of callers naming a service, built on first
// use; sync.Map suits keys written once and read many times.
type lazyViews struct{ m sync.Map }

func (l *lazyViews) get(key [3]int, build func() *view) *view {
	if v, ok := l.m.Load(key); ok {
		return v.(*view)
	}
	v, _ := l.m.LoadOrStore(key, build())
	return v.(*view)
}
