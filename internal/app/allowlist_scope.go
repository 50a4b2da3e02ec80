package app

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// ProxyTool is the name the egress proxy's requests are recorded and
// scoped under.
const ProxyTool = "proxy"

// StoredRules is the rows as the guard's policy is built from them.
func StoredRules(rows []models.AllowlistEntry) []guard.StoredRule {
	out := make([]guard.StoredRule, len(rows))
	for i, r := range rows {
		out[i] = guard.StoredRule{Entry: r.Entry, Agents: r.Agents, Tools: r.Tools, Internal: r.Internal, ReportOnly: r.ReportOnly}
	}
	return out
}

// ScopeOf is a row's scope.
func ScopeOf(r models.AllowlistEntry) guard.Scope {
	return guard.Scope{Agents: r.Agents, Tools: r.Tools}.Normalized()
}

// EntriesIn returns the entries of one scope, which a new entry of that
// scope must not repeat.
func (st AllowlistState) EntriesIn(scope guard.Scope) []guard.Entry {
	key := scope.Key()
	var out []guard.Entry
	for i, r := range st.Rows {
		if r.ScopeKey == key {
			out = append(out, st.Entries[i])
		}
	}
	return out
}

// FindIn returns the row of entry text in scope.
func (st AllowlistState) FindIn(text string, scope guard.Scope) (models.AllowlistEntry, bool) {
	want, key := canonicalEntry(text), scope.Key()
	for _, r := range st.Rows {
		if (r.Entry == text || r.Entry == want) && r.ScopeKey == key {
			return r, true
		}
	}
	return models.AllowlistEntry{}, false
}

// Policy is the rules of the state, built with default settings: what the
// scopes' modes are computed with (settings do not change a mode).
func (st AllowlistState) Policy() (*guard.Policy, error) {
	rules, err := guard.ParseStoredRules(StoredRules(st.Rows))
	if err != nil {
		return nil, err
	}
	return guard.NewPolicyRules(rules, guard.DefaultSettings())
}

// ReachOf is what a scope reaches under the state: for a scope naming
// several agents or tools, what its first agent reaches with its first
// tool (each pair of one scope has the same rules of its own).
func (st AllowlistState) ReachOf(scope guard.Scope) guard.Reach {
	p, err := st.Policy()
	if err != nil {
		return guard.Reach{}
	}
	return p.ReachOf(scopeCaller(scope))
}

// scopeCaller is a caller that a scope covers.
func scopeCaller(s guard.Scope) guard.Caller {
	var c guard.Caller
	if len(s.Agents) > 0 {
		c.Agent = s.Agents[0]
	}
	if len(s.Tools) > 0 {
		c.Tool = s.Tools[0]
	}
	return c
}

// ModeChange is how a change moved one scope between PUBLIC WEB and
// allowlist mode: what the browser and the command line say about it.
type ModeChange struct {
	Scope    guard.Scope
	Was, Now guard.Reach
}

// Switched reports whether the scope's enforced mode changed.
func (m ModeChange) Switched() bool { return m.Was.PublicWeb != m.Now.PublicWeb }

// Sentence says what the change did to the scope's mode, or "" when it
// kept its mode.
func (m ModeChange) Sentence() string {
	who := "Agents"
	if !m.Scope.IsZero() {
		who = "Requests of " + m.Scope.String()
	}
	switch {
	case m.Was.PublicWeb && !m.Now.PublicWeb:
		return who + " now reach only the listed hosts (" + BadgeOf(m.Now) + "), no longer the public web."
	case !m.Was.PublicWeb && m.Now.PublicWeb:
		return who + " reach the public web again (" + BadgeOf(m.Now) + "): any public host on an open port."
	case m.Now.PublicWeb && !m.Now.TrialPublicWeb && m.Was.TrialPublicWeb:
		return who + " still reach the public web: the new entries run report-only, and would limit them to the listed hosts once enforced."
	}
	return ""
}

// BadgeOf is a scope's mode as the card and the CLI show it: "PUBLIC
// WEB" or "N ALLOWED", then "· N INTERNAL" for its internal hosts and "·
// N REPORT-ONLY" for entries being tried.
func BadgeOf(r guard.Reach) string {
	b := "PUBLIC WEB"
	if !r.PublicWeb {
		b = strconv.Itoa(r.Listed) + " ALLOWED"
	}
	if r.Internal > 0 {
		b += " · " + strconv.Itoa(r.Internal) + " INTERNAL"
	}
	if r.ReportOnly > 0 {
		b += " · " + strconv.Itoa(r.ReportOnly) + " REPORT-ONLY"
	}
	return b
}

// maxScopeName bounds an agent or tool name in a scope.
const maxScopeName = 100

// checkScope checks a scope's names: agents are token names, tools the
// names of tools (built-in, integrations, browser tools) or "proxy".
func (a *App) checkScope(ctx context.Context, s guard.Scope) []Problem {
	var problems []Problem
	for _, n := range s.Agents {
		if len(n) > maxScopeName || strings.IndexFunc(n, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || unicode.IsControl(r) }) >= 0 {
			problems = append(problems, Problem{Field: "agents", Input: n, Problem: fmt.Sprintf("%q is not an agent token name", n),
				Fix: "name the agent as its token is named (console token list), one name per --agent"})
		}
	}
	known := a.scopeTools(ctx)
	for _, t := range s.Tools {
		if !slices.Contains(known, t) && !tools.IsBrowserTool(t) /* a scope may name them before they are switched on */ {
			problems = append(problems, Problem{Field: "tools", Input: t, Problem: fmt.Sprintf("%q is not a tool", t),
				Fix: "use one of: " + strings.Join(known, ", ")})
		}
	}
	return problems
}

// scopeTools is every tool name a scope may name: the built-in tools, the
// integrations by name, and the proxy.
func (a *App) scopeTools(ctx context.Context) []string {
	names := append(tools.BuiltinNames(), ProxyTool)
	// From the store, not the running integrations: a command-line App
	// does not run them, and an integration just saved may not be
	// reloaded yet.
	if rows, err := a.store.ListIntegrations(ctx); err == nil {
		for _, in := range rows {
			names = append(names, in.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// ScopeTools is what a scope's tool list may name, for forms and help.
func (a *App) ScopeTools(ctx context.Context) []string { return a.scopeTools(ctx) }

// EnforceEntries switches report-only entries to enforced.
type EnforceEntries struct {
	IDs     []int64
	Actor   string
	Version int64
}

// EntriesEnforced is what an enforce did.
type EntriesEnforced struct {
	Enforced []models.AllowlistEntry
	Modes    []ModeChange
	Version  int64
}

// EnforceEntries switches the named report-only entries to enforced, one
// audit record each, in one transaction, and reloads the guard. Errors:
// *ConflictError, *NotFoundError (an ID gone or already enforced),
// *NotReloadedError.
func (a *App) EnforceEntries(ctx context.Context, req EnforceEntries) (EntriesEnforced, error) {
	st, err := a.Allowlist(ctx)
	if err != nil {
		return EntriesEnforced{}, err
	}
	if req.Version != models.AnyRevision && req.Version != st.Version {
		return EntriesEnforced{}, &ConflictError{Section: models.SectionAllowlist, Expected: req.Version, Current: st.Version}
	}
	var rows []models.AllowlistEntry
	var records []models.Audit
	after := st
	after.Rows = slices.Clone(st.Rows)
	for _, id := range req.IDs {
		i := slices.IndexFunc(st.Rows, func(r models.AllowlistEntry) bool { return r.ID == id && r.ReportOnly })
		if i < 0 {
			return EntriesEnforced{}, &NotFoundError{Kind: "report-only allowlist entry", Name: strconv.FormatInt(id, 10)}
		}
		r := st.Rows[i]
		after.Rows[i].ReportOnly = false
		rows = append(rows, r)
		records = append(records, models.Audit{Actor: req.Actor, Action: ActionAllowlistEnforce, Target: RowText(r), Before: "report-only", After: "enforced"})
	}
	if len(rows) == 0 {
		return EntriesEnforced{}, &ValidationError{Problems: []Problem{{Field: "entries", Code: ProblemNoEntries,
			Problem: "no entry was named", Fix: "name the report-only entry to enforce"}}}
	}
	v, err := a.store.EnforceAllowlistRows(ctx, req.Version, rows, records...)
	if err != nil {
		return EntriesEnforced{}, a.allowlistRace(ctx, req.Version, err)
	}
	res := EntriesEnforced{Enforced: rows, Version: v}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.ScopeKey] {
			continue
		}
		seen[r.ScopeKey] = true
		s := ScopeOf(r)
		res.Modes = append(res.Modes, ModeChange{Scope: s, Was: st.ReachOf(s), Now: after.ReachOf(s)})
	}
	return res, a.reloadAfter(ctx, "allowlist")
}

// RowText is an allowlist row as the audit trail and messages show it:
// the entry, its scope when narrowed, and its flags.
func RowText(r models.AllowlistEntry) string {
	s := r.Entry
	if sc := ScopeOf(r); !sc.IsZero() {
		s += " for " + sc.String()
	}
	if r.Internal {
		s += " (internal host)"
	}
	if r.ReportOnly {
		s += " (report-only)"
	}
	return s
}

// WouldRefuseSummary is what report-only entries would have refused
// lately: the card's "N requests from M agents in the last 7 days".
type WouldRefuseSummary struct {
	Requests, Agents int64
	Days             int
}

// WouldRefuseDays is the window of the would-be refusal count, on the
// card and in the refusal log's would-refuse view.
const WouldRefuseDays = 7

// WouldRefuse counts the requests report-only entries would have refused
// in the last 7 days.
func (a *App) WouldRefuse(ctx context.Context) (WouldRefuseSummary, error) {
	c, err := a.store.CountWouldRefusals(ctx, time.Now().AddDate(0, 0, -WouldRefuseDays))
	return WouldRefuseSummary{Requests: c.Requests, Agents: c.Agents, Days: WouldRefuseDays}, err
}

// wouldRefusalRow is the row of a record that report-only entries would
// have refused.
func wouldRefusalRow(rec guard.Record) models.WouldRefusal {
	r := rec.WouldRefuse
	return models.WouldRefusal{Time: rec.Time, Tool: rec.Caller.Tool, Integration: rec.Caller.Service, Agent: rec.Caller.Agent,
		Thread: rec.Caller.Thread, Ticket: rec.Caller.Ticket, URL: rec.URL, Host: rec.Host, Port: int(rec.Port),
		Code: string(r.Code), Reason: string(r.Reason), Message: r.Message, Proxied: rec.Proxied}
}

// CallerAs is the caller a request of agent with tool is decided as: an
// integration's name is call_integration with the integration as its
// service, as the integration's own requests are.
func CallerAs(agent, tool string) guard.Caller {
	c := guard.Caller{Agent: agent, Tool: tool}
	if tool != "" && tool != ProxyTool && !tools.IsBrowserTool(tool) && !slices.Contains(tools.BuiltinNames(), tool) {
		c.Tool, c.Service = tools.CallIntegrationName, tool
	}
	return c
}

// Effective is what one agent may reach with one tool: the answer to
// "what can agent X reach with tool Y?".
type Effective struct {
	Caller guard.Caller
	Reach  guard.Reach
	Badge  string
	// Rules are the entries that apply, the default scope's included.
	Rules []guard.Rule
}

// EffectiveFor is what agent may reach with tool under the policy in
// force ("" for either: any agent, any tool no entry names).
func (a *App) EffectiveFor(agent, tool string) Effective {
	c := CallerAs(agent, tool)
	p := a.guard.Policy()
	r := p.ReachOf(c)
	return Effective{Caller: c, Reach: r, Badge: BadgeOf(r), Rules: p.RulesFor(c)}
}

// LastNarrowing reports whether removing a row returns its scope to
// PUBLIC WEB: the row narrows (enforced, not an internal host) and is the
// only narrowing entry its scope's callers meet. It builds one policy,
// and one reach per scope, however many rows it is asked about: the card
// asks it of every row, and a policy per row made the card quadratic in
// the list's length.
func (st AllowlistState) LastNarrowing() func(models.AllowlistEntry) bool {
	p, err := st.Policy()
	reaches := map[string]guard.Reach{}
	return func(row models.AllowlistEntry) bool {
		if err != nil || row.Internal || row.ReportOnly {
			return false
		}
		s := ScopeOf(row)
		r, ok := reaches[s.Key()]
		if !ok {
			r = p.ReachOf(scopeCaller(s))
			reaches[s.Key()] = r
		}
		return !r.PublicWeb && r.Listed == 1
	}
}

// RowByID returns the row with id.
func (st AllowlistState) RowByID(id int64) (models.AllowlistEntry, guard.Entry, bool) {
	for i, r := range st.Rows {
		if r.ID == id {
			return r, st.Entries[i], true
		}
	}
	return models.AllowlistEntry{}, guard.Entry{}, false
}

// AllowIntegrationHost adds the host of an integration's URL as an
// internal host for that integration alone: the integration reaches it,
// and nothing else changes (agents keep the public web; their other
// tools still cannot reach it). Adding it again is no error.
func (a *App) AllowIntegrationHost(ctx context.Context, name, rawURL, actor string) (EntriesAdded, error) {
	entry, err := integrationHostEntry(rawURL)
	if err != nil {
		return EntriesAdded{}, &ValidationError{Problems: []Problem{{Field: "url", Input: rawURL, Problem: err.Error(),
			Fix: "add the host under Outbound web access, as an internal host for tool " + name}}}
	}
	return a.AddEntries(ctx, AddEntries{Entries: []string{entry}, Scope: guard.Scope{Tools: []string{name}}, Internal: true,
		Note: "For integration " + name, Actor: actor, Version: models.AnyRevision, AlreadyListedIsOK: true})
}

// integrationHostEntry is the literal entry of a URL template's host,
// with its port when it is not the scheme's default.
func integrationHostEntry(raw string) (string, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", fmt.Errorf("the URL has no scheme")
	}
	host := rest
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if strings.ContainsAny(host, "{}") {
		return "", fmt.Errorf("the URL's host is filled from a parameter, so there is no one host to allow")
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	e, err := guard.ParseEntry(host)
	if err != nil {
		return "", err
	}
	if (scheme == "https" && e.Port() == 443) || (scheme == "http" && e.Port() == 80) {
		return strings.TrimSuffix(e.String(), ":"+strconv.Itoa(int(e.Port()))), nil
	}
	return e.String(), nil
}
