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
}

// Builtin builds the registry of the product's tools. A new tool is one
// file holding its Tool value and one line here.
func Builtin(d Deps) *Registry {
	r := NewRegistry(d.Guard)
	if d.Fetch == nil {
		d.Fetch = NewFetcher(d.Guard, d.Settings)
	}
	r.Add(FetchTool(d.Fetch))
	if d.Shots != nil {
		r.Add(ScreenshotTool(d.Shots))
	}
	if d.Integrations != nil {
		r.Add(CallIntegrationTool(d.Integrations))
		r.AddSource(d.Integrations)
	}
	return r
}
