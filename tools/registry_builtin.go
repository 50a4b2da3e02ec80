package tools

import "github.com/outboundhq/outbound/guard"

// Deps are what the built-in tools run on. A nil tool is left out: the
// command line's fetch has no browser and no integrations.
type Deps struct {
	Guard    *guard.Guard
	Settings func() Settings
	Fetch    *Fetcher
	Shots    *Screenshotter
	// Integrations adds call_integration and one tool per integration,
	// kept in step with the integrations' Set.
	Integrations *Integrations
	// Browser adds the browser_* tools while the browser setting is on.
	Browser *Tabs
	// WebReads keeps which conversations have read the web where every
	// replica sees them (taint.go); nil keeps them in this process only,
	// for a process whose conversation is its own (the command line,
	// MCP over stdio).
	WebReads WebReadStore
}

// builtins is the one list of the product's tools: each line builds a
// tool from the deps, and says whether the deps include it. Builtin
// registers them and BuiltinNames reserves their names, so a new tool is
// one file holding its Tool value and one line here.
var builtins = []func(d Deps) (Tool, bool){
	func(d Deps) (Tool, bool) { return FetchTool(d.Fetch), true },
	func(d Deps) (Tool, bool) { return ScreenshotTool(d.Shots), d.Shots != nil },
	func(d Deps) (Tool, bool) { return CallIntegrationTool(d.Integrations), d.Integrations != nil },
}

// Builtin builds the registry of the product's tools.
func Builtin(d Deps) *Registry {
	r := NewRegistry(d.Guard)
	r.settings = d.Settings
	r.reads.store = d.WebReads
	if d.Fetch == nil {
		d.Fetch = NewFetcher(d.Guard, d.Settings)
	}
	for _, build := range builtins {
		if t, ok := build(d); ok {
			r.Add(t)
		}
	}
	if d.Integrations != nil {
		r.AddSource(d.Integrations)
	}
	if d.Browser != nil {
		r.AddSource(d.Browser)
	}
	return r
}

// BuiltinNames are the names of every built-in tool, whatever a process
// runs: an integration may not take one, even where that tool is left out.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for _, build := range builtins {
		// Building a Tool value only names what it will run on, so the
		// zero deps are enough to read its name.
		t, _ := build(Deps{})
		names = append(names, t.Name)
	}
	return append(names, BrowserToolNames()...)
}
