package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/outboundhq/outbound/guard"
)

// Integrations runs the admin-defined integrations through the guard. It
// is a ToolSource: the registry offers one tool per integration and keeps
// every MCP server's list in step with Set. It is safe for concurrent use;
// Set replaces the whole set, as a reload does.
type Integrations struct {
	guard    *guard.Guard
	settings func() Settings

	mu        sync.Mutex
	defs      map[string]Integration
	listeners []func()
}

// NewIntegrations returns an empty set over g. settings is called on every
// call, so a reload applies to the next call.
func NewIntegrations(g *guard.Guard, settings func() Settings) *Integrations {
	return &Integrations{guard: g, settings: settings, defs: map[string]Integration{}}
}

// Set replaces the integrations in force and tells the listeners (the
// registry, which updates every MCP server; the SDK tells connected
// clients that the list changed).
func (x *Integrations) Set(list []Integration) {
	x.mu.Lock()
	x.defs = make(map[string]Integration, len(list))
	for _, in := range list {
		x.defs[in.Name] = in
	}
	listeners := slices.Clone(x.listeners)
	x.mu.Unlock()
	for _, changed := range listeners {
		changed()
	}
}

// OnChange registers f to be called after every Set.
func (x *Integrations) OnChange(f func()) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.listeners = append(x.listeners, f)
}

// List returns the integrations in force, by name.
func (x *Integrations) List() []Integration {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]Integration, 0, len(x.defs))
	for _, in := range x.defs {
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Integration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (x *Integrations) lookup(name string) (Integration, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	in, ok := x.defs[name]
	return in, ok
}

// IntegrationResult is one call's outcome: a refusal (by the guard, or of
// the parameters), or the status and body the service answered.
type IntegrationResult struct {
	Name    string
	Refusal *guard.Refusal

	Method      string
	URL         string // the URL called, after redirects
	Status      int
	ContentType string
	Body        string // as text, JSON pretty-printed
	Binary      bool   // the body is not text; Body is empty
	Bytes       int    // the body's size as received
	Shown       int    // characters of Body shown, at most page_chars
	Total       int    // characters in Body
}

// OK reports whether the service was reached (whatever status it gave).
func (r *IntegrationResult) OK() bool { return r.Refusal == nil }

// Call runs the integration named name with params as an agent passed them.
func (x *Integrations) Call(ctx context.Context, turn Turn, name string, params map[string]json.RawMessage) IntegrationResult {
	in, ok := x.lookup(name)
	if !ok {
		known := make([]string, 0)
		for _, i := range x.List() {
			known = append(known, i.Name)
		}
		fix := "No integrations are defined; an admin adds them under Integrations → HTTP integrations."
		if len(known) > 0 {
			fix = "Use one of: " + strings.Join(known, ", ") + "."
		}
		return IntegrationResult{Name: name, Refusal: &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonUnknownIntegration, Tool: CallIntegrationName, Agent: turn.Agent,
			Message: fmt.Sprintf("There is no integration named %q.", name), Fix: fix}}
	}
	vals, err := in.ParamsFromJSON(params)
	if err != nil {
		return paramRefusal(in.Name, err)
	}
	if in.Method != http.MethodGet {
		// A request that may change something, asked for by an agent
		// that may have read a page's orders: a person confirms it.
		// A request the policy refuses anyway is not put to a person: it
		// goes on to be refused (and recorded) by the guard. It is
		// decided as the integration, as run sends it: a rule scoped to
		// this integration admits it here too.
		req := in.request(vals)
		dctx, cancel := context.WithTimeout(asIntegration(ctx, turn, in), x.settings().Guard.Timeout)
		allowed := x.guard.Decide(dctx, req.URL).Allowed
		cancel()
		if !allowed {
			return x.run(ctx, turn, in, vals)
		}
		if r := confirmIfReadWeb(ctx, integrationSideEffect(in, req)); r != nil {
			return IntegrationResult{Name: in.Name, Method: in.Method, URL: req.URL, Refusal: r}
		}
	}
	return x.run(ctx, turn, in, vals)
}

// integrationSideEffect is what a person is shown before an integration
// sends: the method, the filled URL and body, exactly as they will be
// sent. Header values are left out: they hold the integration's secrets.
func integrationSideEffect(in Integration, req guard.Request) SideEffect {
	what := fmt.Sprintf("The HTTP integration %s sends %s %s", in.Name, req.Method, req.URL)
	if len(req.Body) > 0 {
		what += " with the body:\n" + string(req.Body)
	} else {
		what += " with no body."
	}
	return SideEffect{Tool: CallIntegrationName, What: what, Where: req.URL}
}

// Try runs a definition that need not be in force, with parameters typed
// as text: the console's Test button. It is one call of call_integration
// by turn, recorded once as a registry call is, whatever happened inside:
// a parameter refusal, a refusal by the guard, a network failure or an
// answer.
func (x *Integrations) Try(ctx context.Context, turn Turn, in Integration, params map[string]string) IntegrationResult {
	start := time.Now()
	caller := turn.caller(CallIntegrationName)
	caller.Service = in.Name
	ctx, notes := guard.WithNotes(guard.WithCaller(ctx, caller))
	var res IntegrationResult
	if vals, err := in.ParamsFromText(params); err != nil {
		res = paramRefusal(in.Name, err)
	} else {
		res = x.run(ctx, turn, in, vals)
	}
	recordCall(x.guard, caller, notes, Result{Refusal: res.Refusal, URL: res.URL}, time.Since(start))
	return res
}

func paramRefusal(name string, err error) IntegrationResult {
	ie, _ := err.(*IntegrationError)
	msg, fix := err.Error(), "Check the parameters."
	if ie != nil {
		msg, fix = ie.Sentences()
	}
	return IntegrationResult{Name: name, Refusal: &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonBadParams, Tool: CallIntegrationName, Service: name, Message: msg, Fix: fix}}
}

// Sentence capitalises s and ends it with one full stop: how a problem or
// a fix written as a clause is shown to a person or an agent.
func Sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// asIntegration is ctx with in as the caller's Service, so an allowlist
// rule scoped to this one integration applies to its requests alone.
func asIntegration(ctx context.Context, turn Turn, in Integration) context.Context {
	c := guard.CallerFrom(ctx)
	c.Tool, c.Agent, c.Thread, c.Trigger, c.Service = CallIntegrationName, turn.Agent, turn.Thread, turn.Trigger, in.Name
	return guard.WithCaller(ctx, c)
}

// run sends the filled request through the guard and reads the answer.
func (x *Integrations) run(ctx context.Context, turn Turn, in Integration, vals map[string]paramValue) IntegrationResult {
	s := x.settings()
	ctx = asIntegration(ctx, turn, in)
	req := in.request(vals)
	res := IntegrationResult{Name: in.Name, Method: in.Method, URL: req.URL}
	resp, err := x.guard.Do(ctx, req)
	if err != nil {
		res.Refusal = refusalOf(err, req.URL)
		return res
	}
	body, err := resp.ReadAll()
	if err != nil {
		res.Refusal = refusalOf(err, req.URL)
		return res
	}
	res.URL, res.Status, res.ContentType, res.Bytes = resp.URL.String(), resp.StatusCode, resp.Header.Get("Content-Type"), len(body)
	text, ok := bodyText(body, res.ContentType)
	if !ok {
		res.Binary = true
		return res
	}
	res.Total = runeCount(text)
	p := cutPart(text, res.Total, 0, s.PageChars)
	res.Body, res.Shown = p.text, p.end
	return res
}

// request is the integration's request filled with vals.
func (in Integration) request(vals map[string]paramValue) guard.Request {
	req := guard.Request{Method: in.Method, URL: fillURL(in.URL, vals), Header: http.Header{"Accept": {"application/json, text/*;q=0.9, */*;q=0.1"}}}
	for _, h := range in.Headers {
		req.Header.Set(strings.TrimSpace(h.Name), h.Value)
	}
	if strings.TrimSpace(in.Body) != "" {
		req.Body = fillBody(in.Body, vals)
		if req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	return req
}

// bodyText returns the body as text: JSON pretty-printed, other UTF-8 as
// it is. A body that is not UTF-8 text is not shown.
func bodyText(body []byte, contentType string) (string, bool) {
	trimmed := bytes.TrimSpace(body)
	if strings.Contains(strings.ToLower(contentType), "json") || (len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')) {
		var b bytes.Buffer
		if json.Indent(&b, trimmed, "", "  ") == nil {
			return b.String(), true
		}
	}
	if !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0 {
		return "", false
	}
	return string(body), true
}

// Answer renders the result as the text the agent reads.
func (r *IntegrationResult) Answer() string {
	if r.Refusal != nil {
		return RefusalAnswer(r.Name, r.Refusal)
	}
	var b strings.Builder
	b.WriteString(IntegrationDataNote + "\n")
	fmt.Fprintf(&b, "Integration: %s\n", r.Name)
	// The method but not the URL: the service's address is the admin's
	// business, and an internal one is not for the model to learn.
	fmt.Fprintf(&b, "Request: %s\n", r.Method)
	fmt.Fprintf(&b, "Status: %d %s", r.Status, http.StatusText(r.Status))
	if r.Status < 200 || r.Status > 299 {
		b.WriteString(" (the service answered with an error)")
	}
	b.WriteString("\n")
	if r.ContentType != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", r.ContentType)
	}
	switch {
	case r.Binary:
		fmt.Fprintf(&b, "\n(The body is %d bytes of binary data, which is not shown.)\n", r.Bytes)
		return b.String()
	case r.Total == 0:
		b.WriteString("\n(The body is empty.)\n")
		return b.String()
	case r.Shown < r.Total:
		fmt.Fprintf(&b, "The body was cut: characters 0 to %d of %d are shown (Settings → Page characters).\n", r.Shown, r.Total)
	}
	b.WriteString("\n" + r.Body + "\n")
	return b.String()
}
