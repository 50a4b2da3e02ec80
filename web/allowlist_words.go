package web

// What an allowlist entry means, in the words the card, the remove
// confirmation and the Allow this host preview use. They are computed from
// the parsed entry and the settings in force, so they cannot drift from
// what the guard enforces.

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/views"
)

// openPorts names the ports an entry without a pinned port allows:
// "ports 80 and 443", "ports 80, 443 and 8080".
func openPorts(s guard.Settings) string {
	ports := []string{"80", "443"}
	for _, p := range s.ExtraPorts {
		if p != 80 && p != 443 {
			ports = append(ports, strconv.Itoa(int(p)))
		}
	}
	return "ports " + joinAnd(ports)
}

// entryScope says what e lets agents reach: "intranet.corp on port 8080",
// "docs.example.com and every name under it on ports 80 and 443".
func entryScope(e guard.Entry, ports string) string {
	where := e.Host()
	if e.Wildcard() {
		where += " and every name under it"
	}
	if e.Port() != 0 {
		return where + " on port " + strconv.Itoa(int(e.Port()))
	}
	return where + " on " + ports
}

// removeQuestion is the confirmation asked before removing e. Removing
// the last entry widens access rather than narrowing it, so the question
// must not claim that agents lose e: they keep it, with every other public
// host besides.
func removeQuestion(e guard.Entry, ports string, listLen int) string {
	return "Remove " + e.String() + "? " + removeConsequence(e, ports, listLen)
}

// removeConsequence says what removing e does to what agents reach.
func removeConsequence(e guard.Entry, ports string, listLen int) string {
	if listLen == 1 {
		return lastEntryTruth(e)
	}
	return "Agents will no longer reach " + entryScope(e, ports) + "."
}

func lastEntryTruth(e guard.Entry) string {
	return "This is the last entry: removing it returns the console to PUBLIC WEB, where agents reach any public host, including " + e.Host() + " if it is public."
}

// removedMessage is the flash after e was removed from a list of listLen.
func removedMessage(e guard.Entry, ports string, listLen int) string {
	if listLen == 1 {
		return "Removed " + e.String() + ". It was the last entry: the console is back on PUBLIC WEB, where agents reach any public host, including " + e.Host() + " if it is public."
	}
	return "Removed " + e.String() + ". Agents can no longer reach " + entryScope(e, ports) + "."
}

// addrView classifies one address for display.
func addrView(a netip.Addr) views.AddrView {
	c := guard.ClassifyAddr(a)
	if c.Public() {
		return views.AddrView{Addr: a.String(), Class: "public", Public: true}
	}
	return views.AddrView{Addr: a.String(), Class: c.Range}
}

// reachPreview says exactly what adding e makes reachable, given the
// decision d for the refused URL under a policy that has e:
//
//	After adding intranet.corp:8080, agents can reach intranet.corp on port
//	8080 only, at 10.1.2.3 (private-use range 10.0.0.0/8), which is allowed
//	because the entry is literal.
func reachPreview(e guard.Entry, d guard.Decision, ports string) string {
	var b strings.Builder
	b.WriteString("After adding " + e.String() + ", agents can reach " + entryScope(e, ports))
	if e.Port() != 0 {
		b.WriteString(" only")
	}
	internal := false
	var where []string
	for _, a := range d.Addresses() {
		v := addrView(a)
		internal = internal || !v.Public
		if e.IP().IsValid() {
			where = append(where, v.Class)
		} else {
			where = append(where, v.Addr+" ("+v.Class+")")
		}
	}
	switch {
	case e.IP().IsValid() && len(where) > 0:
		b.WriteString(" (" + strings.Join(where, ", ") + ")")
	case len(where) > 0:
		b.WriteString(", at " + joinAnd(where))
	}
	if internal {
		b.WriteString(", which is allowed because the entry is literal")
	}
	b.WriteString(".")
	return b.String()
}

// followsName warns that a name entry admits the name, not the addresses
// it has today.
func followsName(e guard.Entry) string {
	if e.IP().IsValid() {
		return ""
	}
	return "The entry follows the name, not today's addresses: if " + e.Host() +
		" later resolves to another public, private, loopback or CGNAT address, that is reachable too. Link-local, metadata and special-purpose addresses stay refused."
}

func joinAnd(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
