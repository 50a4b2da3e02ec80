package guard

import (
	"net/netip"
	"strings"
)

// Allowlist is an immutable set of entries with flat-cost matching: a map
// lookup for the exact host and one map lookup per label of the host for
// wildcards. It never scans the entries, so 10,000 entries cost what 10 do.
type Allowlist struct {
	entries []Entry
	names   map[string][]int32     // literal name entries by name
	ips     map[netip.Addr][]int32 // IP entries by address
	wild    map[string][]int32     // wildcard entries by their domain
}

// NewAllowlist builds an allowlist. A repeated entry is an *EntryError.
func NewAllowlist(entries []Entry) (*Allowlist, error) {
	a := &Allowlist{
		entries: append([]Entry(nil), entries...),
		names:   make(map[string][]int32),
		ips:     make(map[netip.Addr][]int32),
		wild:    make(map[string][]int32),
	}
	seen := make(map[Entry]bool, len(entries))
	for i, e := range a.entries {
		if e.IsZero() {
			return nil, &EntryError{Problem: "the entry is empty", Fix: "remove it"}
		}
		if seen[e] {
			return nil, duplicateError(0, e.String())
		}
		seen[e] = true
		switch {
		case e.ip.IsValid():
			a.ips[e.ip] = append(a.ips[e.ip], int32(i))
		case e.wildcard:
			a.wild[e.name] = append(a.wild[e.name], int32(i))
		default:
			a.names[e.name] = append(a.names[e.name], int32(i))
		}
	}
	return a, nil
}

func duplicateError(line int, s string) *EntryError {
	return &EntryError{Line: line, Input: s, Problem: "the entry is listed twice", Fix: "remove the repeated line"}
}

// Len returns the number of entries. An empty allowlist means PUBLIC WEB.
func (a *Allowlist) Len() int {
	if a == nil {
		return 0
	}
	return len(a.entries)
}

// Entries returns a copy of the entries in their original order.
func (a *Allowlist) Entries() []Entry {
	if a == nil {
		return nil
	}
	return append([]Entry(nil), a.entries...)
}

// match finds the entry that admits host on port. portOpen says whether
// the port is open by policy, which is what an entry without a pinned port
// relies on. hostListed reports that some entry names the host even though
// none admits this port, so the refusal can say "wrong port" rather than
// "not listed". Literal entries win over wildcards, and longer wildcard
// domains over shorter ones.
func (a *Allowlist) match(h host, port uint16, portOpen bool) (e Entry, hostListed bool) {
	if a == nil {
		return Entry{}, false
	}
	pick := func(idx []int32) (Entry, bool) {
		for _, i := range idx {
			if c := a.entries[i]; c.port == port || (c.port == 0 && portOpen) {
				return c, true
			}
		}
		return Entry{}, false
	}
	if h.ip.IsValid() {
		idx := a.ips[h.ip]
		e, ok := pick(idx)
		return e, ok || len(idx) > 0
	}
	idx := a.names[h.name]
	if e, ok := pick(idx); ok {
		return e, true
	}
	hostListed = len(idx) > 0
	for rest := h.name; ; {
		if idx := a.wild[rest]; len(idx) > 0 {
			if e, ok := pick(idx); ok {
				return e, true
			}
			hostListed = true
		}
		dot := strings.IndexByte(rest, '.')
		if dot < 0 {
			return Entry{}, hostListed
		}
		rest = rest[dot+1:]
	}
}

// ParseEntries parses an admin's text, one entry per line. Blank lines are
// skipped and the ends of each line trimmed; everything else must be a valid
// entry. A line that repeats another line, or an entry of existing, is an
// error too. Every bad line gets its own *EntryError (with Line set), so a
// form can show each message beside its line; the entries are returned
// only when there is no error, so nothing is half-saved.
func ParseEntries(text string, existing []Entry) ([]Entry, []*EntryError) {
	have := make(map[Entry]bool, len(existing))
	for _, e := range existing {
		have[e] = true
	}
	var (
		out  []Entry
		errs []*EntryError
	)
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		e, err := ParseEntry(line)
		if err != nil {
			ee := err.(*EntryError)
			ee.Line = i + 1
			errs = append(errs, ee)
			continue
		}
		if have[e] {
			ee := duplicateError(i+1, line)
			if contains(existing, e) {
				ee.Problem = "the entry " + e.String() + " is already on the list"
				ee.Fix = "remove this line; the host is already allowed"
			}
			errs = append(errs, ee)
			continue
		}
		have[e] = true
		out = append(out, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func contains(list []Entry, e Entry) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}
