package tools

// The registry is the one list of agent tools and the one way to call
// them. MCP (stdio and streamable HTTP), the JSON API and the command line
// all look a tool up here and call it through Registry.Call, so a tool is
// described, checked, run and recorded the same way whichever door the
// agent came in by. Adding a tool is one file holding its Tool value and
// one line in Builtin.

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/outboundhq/outbound/guard"
)

// The built-in tools' names, spelt one way in MCP, the API, the CLI, the
// log, the metrics and the refusal log.
const (
	FetchURLName        = "fetch_url"
	TakeScreenshotName  = "take_screenshot"
	CallIntegrationName = "call_integration"
)

// IsBrowserTool reports whether name is one of the browser tools, whose
// calls and page requests are recorded under their own names. It names
// them exactly: an integration may be called browser_something.
func IsBrowserTool(name string) bool { return slices.Contains(BrowserToolNames(), name) }

// Effect is a tool's side-effect class.
type Effect string

const (
	// EffectRead tools only read: calling one twice changes nothing.
	EffectRead Effect = "read"
	// EffectWrite tools may change something at the far end.
	EffectWrite Effect = "write"
)

// Tool is one agent tool: what an agent reads about it, the input it
// takes (a JSON schema with bounds, which MCP clients see and every call
// is checked against), its side-effect class, and its handler.
type Tool struct {
	Name        string
	Title       string
	Description string
	// Schema is the input: an object schema whose properties may carry
	// minimum, maximum and maxLength. Calls are checked against it before
	// Run, unless Check is set.
	Schema *jsonschema.Schema
	Effect Effect
	// Idempotent says a repeated call with the same input has no further
	// effect (an MCP hint).
	Idempotent bool
	// NoWeb says the tool's answers carry nothing read from the web or a
	// service. Every other call marks its conversation as having read the
	// web (see ConfirmSideEffect), and MCP clients are told its world is
	// open; the zero value errs on the safe side.
	NoWeb bool
	// Example is an input shown in the fixes of input errors.
	Example string
	// Records is the name the tool's calls are recorded under, when not
	// Name: every integration's own tool is recorded as call_integration.
	Records string
	// Check, when set, replaces the schema check: integrations check their
	// parameters with their own wording.
	Check func(args map[string]json.RawMessage) error
	// Run does the work. It never returns an error: a refusal or a
	// failure is a Result the agent reads.
	Run func(ctx context.Context, turn Turn, args map[string]json.RawMessage) Result
}

// recordedAs is the tool name a call is recorded under.
func (t *Tool) recordedAs() string {
	if t.Records != "" {
		return t.Records
	}
	return t.Name
}

// Result is one call's answer, the same over every transport: Text is
// what the agent reads over MCP and the API's "answer", API the JSON
// API's body. A refusal is a result too, never an error.
type Result struct {
	Refusal *guard.Refusal
	Text    string
	// PNG is an image shown before Text (take_screenshot).
	PNG []byte
	// API is the JSON API's answer.
	API any

	// For the call's record, when the guard's own notes do not say it:
	// the URL answered, the redirects that led there, and whether the
	// answer came from the cache.
	URL       string
	Redirects []string
	Cached    bool

	// input is set when the call was refused before the tool ran,
	// because the input does not match the schema.
	input bool
	// pending is set when the call waits for a person's confirmation:
	// it is not over, and was not recorded.
	pending bool
}

// OK reports whether the call was not refused.
func (r *Result) OK() bool { return r.Refusal == nil }

// InputError reports whether the call was refused for its input alone,
// before the tool ran.
func (r *Result) InputError() bool { return r.input }

// ToolSource offers tools that change at run time, such as one tool per
// stored integration. OnChange is called after every change.
type ToolSource interface {
	Tools() []Tool
	OnChange(func())
}

// Registry holds the tools and calls them. It is safe for concurrent use.
type Registry struct {
	guard *guard.Guard
	now   func() time.Time
	// turns is the one turn counter of every MCP session, whatever tool
	// it calls.
	turns *mcpTurns
	// reads remembers the conversations web content has entered (with a
	// WebReadStore, on every replica: taint.go); settings say how their
	// side effects are confirmed (nil: refused).
	reads    *webReads
	settings func() Settings
	// asks are the confirmations on their way to people over MCP.
	asks *asks

	mu      sync.Mutex
	tools   []Tool
	sources []ToolSource
	servers []*mcpServer
}

// NewRegistry returns an empty registry whose calls are recorded through
// g's Recorder.
func NewRegistry(g *guard.Guard) *Registry {
	return &Registry{guard: g, now: time.Now, turns: newMCPTurns(), reads: newWebReads(webReadsMax, webReadsIdle), asks: newAsks()}
}

// Add registers t. A second tool of the same name replaces the first.
func (r *Registry) Add(t Tool) {
	r.mu.Lock()
	r.tools = slices.DeleteFunc(r.tools, func(old Tool) bool { return old.Name == t.Name })
	r.tools = append(r.tools, t)
	r.mu.Unlock()
	r.changed()
}

// AddSource registers tools that change at run time; every MCP server
// built from the registry follows their changes.
func (r *Registry) AddSource(s ToolSource) {
	r.mu.Lock()
	r.sources = append(r.sources, s)
	r.mu.Unlock()
	s.OnChange(r.changed)
	r.changed()
}

// List returns every tool: the fixed ones in the order they were added,
// then the run-time ones by name. A run-time tool never shadows a fixed
// one.
func (r *Registry) List() []Tool {
	r.mu.Lock()
	out := slices.Clone(r.tools)
	sources := slices.Clone(r.sources)
	r.mu.Unlock()
	fixed := len(out)
	for _, s := range sources {
		for _, t := range s.Tools() {
			if !slices.ContainsFunc(out, func(have Tool) bool { return have.Name == t.Name }) {
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out[fixed:], func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns the tools' names, in List's order.
func (r *Registry) Names() []string {
	var names []string
	for _, t := range r.List() {
		names = append(names, t.Name)
	}
	return names
}

// Lookup finds a tool by name. The fixed tools are searched first, so a
// call of fetch_url never builds every integration's tool and schema.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.Lock()
	if i := slices.IndexFunc(r.tools, func(t Tool) bool { return t.Name == name }); i >= 0 {
		t := r.tools[i]
		r.mu.Unlock()
		return t, true
	}
	// A copy, to ask the sources outside the lock; made only for a tool
	// that is not built in (every API call looks its tool up twice).
	sources := slices.Clone(r.sources)
	r.mu.Unlock()
	for _, s := range sources {
		for _, t := range s.Tools() {
			if t.Name == name {
				return t, true
			}
		}
	}
	for _, s := range sources {
		if w, ok := s.(withheldTools); ok {
			if t, ok := w.Withheld(name); ok {
				return t, true
			}
		}
	}
	return Tool{}, false
}

// withheldTools is a ToolSource whose tools may be switched off: a call
// of one while off finds it, and it answers with why, rather than the
// agent hearing that no such tool exists.
type withheldTools interface {
	Withheld(name string) (Tool, bool)
}

// Call is one call of a tool.
type Call struct {
	Tool string
	Turn Turn
	// Args is the input, a JSON object; empty means {}.
	Args json.RawMessage
	// Fields is the input already read into its fields, when the
	// transport had to read it anyway (the API takes its own fields out of
	// the body); Args is then not read. It spares a request encoding its
	// input again only for the registry to decode it once more.
	Fields map[string]json.RawMessage
	// From names the input in messages: "body" for the API, "input" for
	// MCP and the CLI.
	From string
}

// UnknownToolError is a call of a tool the registry does not hold.
type UnknownToolError struct {
	Name  string
	Known []string
}

func (e *UnknownToolError) Error() string { return "There is no tool " + e.Name + "." }

// Fix names the tools that exist.
func (e *UnknownToolError) Fix() string { return UseOneOf(e.Known) }

// UseOneOf is the fix for a name that is not a tool: the tools, sorted,
// so the answer is the same on every request.
func UseOneOf(names []string) string {
	if len(names) == 0 {
		return "No tools are served here."
	}
	names = slices.Sorted(slices.Values(names))
	return "Use one of: " + strings.Join(names, ", ") + "."
}

// Call checks c's input against the tool's schema, runs the tool, and
// records the call: exactly one guard.Record per call, allowed (cached or
// not), refused, or failed on the network, whatever the tool did inside.
// The guard's client records nothing by itself meanwhile: it notes what
// it decided, and the note fills in the record's port and redirects.
func (r *Registry) Call(ctx context.Context, c Call) (Result, error) {
	t, ok := r.Lookup(c.Tool)
	if !ok {
		return Result{}, &UnknownToolError{Name: c.Tool, Known: r.Names()}
	}
	start := r.now()
	turn := c.Turn
	args, ticket, err := t.input(c.Args, c.Fields, c.From)
	if ticket != "" {
		turn.Ticket = ticket // the call's own word wins over its transport's
	}
	// A transport's ticket (a header) is checked here, once for all of
	// them; a malformed one is never recorded, whatever else is wrong.
	if terr := guard.CheckTicket(turn.Ticket); terr != nil {
		turn.Ticket = ""
		if err == nil {
			err = ticketInputError(terr)
		}
	}
	caller := turn.caller(t.recordedAs())
	ctx, notes := guard.WithNotes(guard.WithCaller(ctx, caller))
	conv := &conversation{thread: c.Turn.Thread, reads: r.reads, settings: r.settings, now: r.now}
	ctx = withConversation(ctx, conv)
	var res Result
	if err != nil {
		res = inputRefusal(t.Name, err)
	} else {
		res = t.Run(ctx, turn, args)
		if !t.NoWeb && broughtWeb(res) {
			if err := r.reads.mark(ctx, c.Turn.Thread, r.now()); err != nil {
				res = unrecordedRefusal(t.Name, res)
			}
		}
	}
	if conv.isPending() {
		// A person is being asked; the call comes again with the answer
		// and is recorded then.
		res.pending = true
		return res, nil
	}
	recordCall(r.guard, caller, notes, res, r.now().Sub(start))
	return res, nil
}

// broughtWeb reports whether a call's answer may hold what the web or a
// service said: every answer but a refusal of the policy made before any
// request was answered (no redirect followed). A network failure counts:
// its message may quote the far end.
func broughtWeb(res Result) bool {
	r := res.Refusal
	return r == nil || r.KindOf() == guard.KindNetwork || len(r.Redirects) > 0 || len(res.Redirects) > 0
}

// recordCall makes a call's one Record from its result and the guard's
// notes, and hands it to g: how Registry.Call and the console's Test of
// an integration (Integrations.Try) record a call.
func recordCall(g *guard.Guard, caller guard.Caller, notes *guard.Notes, res Result, elapsed time.Duration) {
	seen, noted := notes.Last()
	caller.Service = serviceOf(caller, seen, noted, res)
	rec := guard.Record{Caller: caller, Refusal: res.Refusal, Cached: res.Cached, Elapsed: elapsed, URL: res.URL, Redirects: res.Redirects}
	if res.Refusal != nil && res.Refusal.URL != "" {
		rec.URL = res.Refusal.URL
	}
	if noted && (rec.URL == "" || rec.URL == seen.URL) {
		rec.URL, rec.Host, rec.Port, rec.Redirects = seen.URL, seen.Host, seen.Port, seen.Redirects
		if rec.Refusal == nil {
			rec.WouldRefuse = seen.WouldRefuse
		}
	}
	if rec.Host == "" && res.Refusal != nil {
		rec.Host = res.Refusal.Host
	}
	if rec.Host == "" {
		rec.Host = hostOf(rec.URL)
	}
	if rec.Port == 0 {
		rec.Port = portOf(rec.URL)
	}
	g.Record(rec)
}

// serviceOf is the named service a call was made for (the integration of
// call_integration, or of an integration's own tool): the caller's own,
// or else the one the guard decided under, or else the one the refusal
// names (a refusal of the parameters, made before any request). The
// call's Record carries it, so the refusal log can say which integration
// was refused and an access request can be scoped to it alone.
func serviceOf(caller guard.Caller, seen guard.Record, noted bool, res Result) string {
	switch {
	case caller.Service != "":
		return caller.Service
	case noted && seen.Caller.Service != "":
		return seen.Caller.Service
	case res.Refusal != nil:
		return res.Refusal.Service
	}
	return ""
}

// portOf is the port a URL names or implies; 0 when it names none.
func portOf(raw string) uint16 {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return 0
	}
	if _, p, err := net.SplitHostPort(u.Host); err == nil {
		n, _ := strconv.ParseUint(p, 10, 16)
		return uint16(n)
	}
	switch u.Scheme {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}
