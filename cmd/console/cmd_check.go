package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
)

func runCheck(ctx context.Context, e env, args []string) error {
	var db, agent, tool string
	var asJSON bool
	fs := newFlags("check", &db)
	fs.BoolVar(&asJSON, "json", false, "print the decision as JSON")
	fs.StringVar(&agent, "agent", "", "decide as this agent (its token name), under the entries scoped to it")
	fs.StringVar(&tool, "tool", "", "decide as this tool (fetch_url, take_screenshot, an integration's name, proxy, …)")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	scoped := agent != "" || tool != ""
	if len(rest) > 1 || (len(rest) == 0 && !scoped) {
		return usagef("give exactly one URL: console check [--agent NAME] [--tool TOOL] [--json] URL; or --agent and/or --tool alone for what they may reach")
	}
	a, err := openApp(ctx, db, app.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer a.Close()
	eff := a.EffectiveFor(agent, tool)
	if len(rest) == 0 {
		return printEffective(e, eff, asJSON)
	}
	d := a.Guard().Decide(guard.WithCaller(ctx, eff.Caller), rest[0])
	if asJSON {
		if err := writeJSON(e.stdout, d, false); err != nil {
			return err
		}
	} else {
		printDecision(e.stdout, &d, eff.Reach.PublicWeb)
		if scoped {
			fmt.Fprintf(e.stdout, "  scope:     %s: %s\n", callerText(eff.Caller), eff.Badge)
		}
	}
	if !d.Allowed {
		return refusedError{}
	}
	return nil
}

// printDecision prints a decision one field a line. The URL is the input
// as given (a pasted URL may carry control characters), and the message
// quotes it, so each field is shown with its control characters escaped.
func printDecision(w io.Writer, d *guard.Decision, publicWeb bool) {
	url := d.Input
	if d.URL != nil {
		url = d.URL.String()
	}
	url = safeLine(url)
	if d.Allowed {
		fmt.Fprintf(w, "allowed  %s\n", url)
		switch {
		case !d.Entry.IsZero():
			fmt.Fprintf(w, "  entry:     %s\n", d.Entry)
		case publicWeb:
			fmt.Fprintf(w, "  entry:     none needed (PUBLIC WEB)\n")
		}
	} else {
		fmt.Fprintf(w, "refused  %s\n", url)
		fmt.Fprintf(w, "  code:      %s (%s)\n", d.Code, d.Reason)
		fmt.Fprintf(w, "  message:   %s\n", safeLine(d.Message))
		fmt.Fprintf(w, "  fix:       %s\n", safeLine(d.Fix))
		if !d.Entry.IsZero() {
			fmt.Fprintf(w, "  entry:     %s\n", d.Entry)
		}
	}
	if r := d.WouldRefuse; r != nil {
		fmt.Fprintf(w, "  would refuse once report-only entries are enforced: %s (%s) %s\n", r.Code, r.Reason, safeLine(r.Message))
	}
	if addrs := d.Addresses(); len(addrs) > 0 {
		parts := make([]string, len(addrs))
		for i, a := range addrs {
			parts[i] = a.String()
		}
		fmt.Fprintf(w, "  addresses: %s\n", strings.Join(parts, ", "))
	}
}

// callerText names the caller a check decided as.
func callerText(c guard.Caller) string {
	agent, tool := c.Agent, c.Tool
	if agent == "" {
		agent = "any agent"
	}
	if c.Service != "" {
		tool = c.Service + " (" + c.Tool + ")"
	}
	if tool == "" {
		tool = "any tool"
	}
	return "agent " + agent + ", tool " + tool
}

type effectiveJSON struct {
	Agent     string     `json:"agent"`
	Tool      string     `json:"tool"`
	Service   string     `json:"service,omitempty"`
	PublicWeb bool       `json:"public_web"`
	Badge     string     `json:"badge"`
	Entries   []ruleJSON `json:"entries"`
}

type ruleJSON struct {
	Entry      string   `json:"entry"`
	Agents     []string `json:"agents"`
	Tools      []string `json:"tools"`
	Internal   bool     `json:"internal"`
	ReportOnly bool     `json:"report_only"`
}

// printEffective prints what one agent may reach with one tool.
func printEffective(e env, eff app.Effective, asJSON bool) error {
	if asJSON {
		out := effectiveJSON{Agent: eff.Caller.Agent, Tool: eff.Caller.Tool, Service: eff.Caller.Service, PublicWeb: eff.Reach.PublicWeb, Badge: eff.Badge, Entries: []ruleJSON{}}
		for _, r := range eff.Rules {
			out.Entries = append(out.Entries, ruleJSON{Entry: r.Entry.String(), Agents: nonNil(r.Scope.Agents), Tools: nonNil(r.Scope.Tools), Internal: r.Internal, ReportOnly: r.ReportOnly})
		}
		return writeJSON(e.stdout, out, false)
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", callerText(eff.Caller), eff.Badge)
	if eff.Reach.PublicWeb {
		fmt.Fprintln(e.stdout, "Reaches any public host on the open ports; internal addresses only where an entry below names them.")
	} else {
		fmt.Fprintln(e.stdout, "Reaches only the hosts listed below; every other host is refused.")
	}
	for _, r := range eff.Rules {
		fmt.Fprintf(e.stdout, "  %-40s %s  (%s)\n", r.Entry, ruleKind(r), scopeText(r.Scope))
	}
	return nil
}

func ruleKind(r guard.Rule) string {
	k := "listed"
	if r.Internal {
		k = "internal"
	}
	if r.ReportOnly {
		k += ",report-only"
	}
	return k
}
