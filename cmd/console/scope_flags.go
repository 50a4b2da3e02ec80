package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
)

// nameList is a flag that may be given more than once (--agent a --agent
// b), or with values separated by commas (--tool fetch_url,proxy).
type nameList struct{ values *[]string }

func (r nameList) String() string {
	if r.values == nil {
		return ""
	}
	return strings.Join(*r.values, ",")
}

func (r nameList) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			return fmt.Errorf("the value is empty; name an agent or a tool")
		}
		*r.values = append(*r.values, v)
	}
	return nil
}

// scopeFlags adds --agent and --tool to fs and returns the scope they
// fill in once parsed.
func scopeFlags(fs *flag.FlagSet) *guard.Scope {
	s := &guard.Scope{}
	fs.Var(nameList{&s.Agents}, "agent", "limit to this agent (its token name); repeat for more")
	fs.Var(nameList{&s.Tools}, "tool", "limit to this tool (fetch_url, take_screenshot, call_integration, an integration's name, proxy, browser_…); repeat for more")
	return s
}

// printModeChange says when a change switched a scope between PUBLIC WEB
// and allowlist mode, as the browser does.
func printModeChange(w io.Writer, m app.ModeChange) {
	if s := m.Sentence(); s != "" {
		fmt.Fprintln(w, s)
	}
}

// scopeText is a row's scope for the list: "every agent, every tool" is
// shown as "all".
func scopeText(s guard.Scope) string {
	if s.IsZero() {
		return "all"
	}
	var parts []string
	if len(s.Agents) > 0 {
		parts = append(parts, "agent "+strings.Join(s.Agents, ","))
	}
	if len(s.Tools) > 0 {
		parts = append(parts, "tool "+strings.Join(s.Tools, ","))
	}
	return strings.Join(parts, "; ")
}
