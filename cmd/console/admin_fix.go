package main

import (
	"fmt"
	"io"

	"github.com/outboundhq/outbound/guard"
)

// printAdminFix shows the admin the exact fix the agent was not shown.
//
// console fetch, console tool and console integrations test print on
// stdout exactly what an agent reads, so that an admin sees the agent's
// view; for an internal target that is "ask an admin", never the entry
// (guard.Refusal.ForAgent). The command line is itself an admin surface
// (it opens the database), so the exact fix and entry follow on stderr,
// apart from the agent's text, as the refusal log and Test a URL show them.
func printAdminFix(w io.Writer, r *guard.Refusal) {
	if r == nil || r.AgentFix() == r.Fix {
		return
	}
	fmt.Fprintf(w, "For the admin (the agent is not shown this): %s\n", safeLine(r.Fix))
	switch {
	case r.Remedy.Kind == guard.RemedyAddEntry && r.Remedy.Internal:
		fmt.Fprintf(w, "  console allow add --internal %s\n", safeLine(r.Remedy.Entry))
	case r.Remedy.Kind == guard.RemedyAddEntry:
		fmt.Fprintf(w, "  console allow add %s\n", safeLine(r.Remedy.Entry))
	}
}
