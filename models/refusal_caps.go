package models

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The longest value each refusal field keeps, in bytes. A refused request
// is chosen by whoever wrote the page or the prompt, so nothing about it is
// trusted to be short: a 900 KB URL once reached the database whole, and a
// stall with 8 KB URLs took the proxy past a gigabyte of queue. Longer
// values are cut at a UTF-8 boundary and end with CutMarker and the count
// of bytes cut, so a reader sees the value was cut and by how much.
// docs/USER-GUIDE.md lists them.
const (
	MaxURLBytes     = 4096 // the URL, and each URL of the redirect chain
	MaxHostBytes    = 255  // a DNS name is at most 253
	MaxTextBytes    = 2048 // message, fix
	MaxNameBytes    = 256  // tool, agent, thread, trigger, entry, remedy value
	MaxCodeBytes    = 64   // code, reason, kind, remedy kind
	MaxListItems    = 32   // addresses and redirects kept; the rest are counted in a last item
	MaxAddressBytes = 64
)

// CutMarker starts the suffix of a cut value: "…[cut 1234 bytes]".
const CutMarker = "…[cut "

// capString returns s cut to at most max bytes, marker included.
func capString(s string, max int) string {
	s = storable(s)
	if len(s) <= max {
		return s
	}
	// The marker's digits depend on the cut, which depends on the
	// marker's length: size the marker for the worst case, len(s).
	room := max - len(CutMarker) - len(" bytes]") - len(strconv.Itoa(len(s)))
	if room < 0 {
		return s[:0]
	}
	for room > 0 && !utf8.RuneStart(s[room]) {
		room--
	}
	return s[:room] + CutMarker + strconv.Itoa(len(s)-room) + " bytes]"
}

// storable is s as every store keeps text: NUL bytes and invalid UTF-8
// become U+FFFD. PostgreSQL refuses both in a text column, and a batch
// holding one would fail whole and be retried for ever ahead of every
// later row, so a URL or argument with a NUL in it (valid JSON: \u0000)
// would stop the log. SQLite would keep them, so both stores now keep the
// same text.
func storable(s string) string {
	if isStorable(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// storedHost is a refused host as the log keeps it: lower-cased here, in
// Go, for every path. Some hosts arrive as they were sent (a CONNECT
// without a port kept "Evil.Example"), while the console's exact host
// filter is lower-cased and SQLite's LOWER folds ASCII only, so a host in
// mixed case was missed by the top-hosts links on both engines and a
// non-ASCII one ("ÄRGER") by a substring on SQLite alone. The refused-host
// list and the counters take the row's host, so they hold the same value.
func storedHost(h string) string { return strings.ToLower(h) }

// moreMarker is the item capList ends a cut list with.
var moreMarker = regexp.MustCompile(`^…\[[0-9]+ more\]$`)

func isStorable(s string) bool { return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) }

// capList keeps at most MaxListItems items, each cut to max bytes; a list
// that was longer ends with an item saying how many were left out.
func capList(l StringList, max int) StringList {
	// A list cut before (MaxListItems items and the count) is left as it
	// is: rows are capped when queued and again when stored directly.
	capped := len(l) == MaxListItems+1 && moreMarker.MatchString(l[MaxListItems])
	changed := len(l) > MaxListItems && !capped
	for _, s := range l {
		if len(s) > max || !isStorable(s) {
			changed = true
			break
		}
	}
	if !changed {
		return l
	}
	n := min(len(l), MaxListItems)
	out := make(StringList, 0, n+1)
	for _, s := range l[:n] {
		out = append(out, capString(s, max))
	}
	if len(l) > n {
		out = append(out, "…["+strconv.Itoa(len(l)-n)+" more]")
	}
	return out
}

// capStrings cuts every field to its bound, before the row is queued.
func (r *Refusal) capStrings() {
	r.URL = capString(r.URL, MaxURLBytes)
	r.Host = capString(storedHost(r.Host), MaxHostBytes)
	r.Message = capString(r.Message, MaxTextBytes)
	r.Fix = capString(r.Fix, MaxTextBytes)
	r.Comment = capString(r.Comment, MaxTextBytes)
	for _, f := range []*string{&r.Tool, &r.Integration, &r.Agent, &r.Thread, &r.Ticket, &r.Trigger, &r.Entry, &r.RemedyValue, &r.ReviewedBy} {
		*f = capString(*f, MaxNameBytes)
	}
	for _, f := range []*string{&r.Code, &r.Reason, &r.Kind, &r.RemedyKind, (*string)(&r.Status)} {
		*f = capString(*f, MaxCodeBytes)
	}
	r.Addresses = capList(r.Addresses, MaxAddressBytes)
	r.Redirects = capList(r.Redirects, MaxURLBytes)
}

// refusalRowOverhead is a refusal's fixed cost in the queue beyond its
// strings' bytes: the struct, string headers, the time and slices.
const refusalRowOverhead = 400

// approxBytes estimates the memory a queued row holds.
func (r *Refusal) approxBytes() int64 {
	n := refusalRowOverhead + len(r.URL) + len(r.Host) + len(r.Message) + len(r.Fix) + len(r.Comment) +
		len(r.Tool) + len(r.Integration) + len(r.Agent) + len(r.Thread) + len(r.Ticket) + len(r.Trigger) + len(r.Entry) + len(r.RemedyValue) + len(r.ReviewedBy) +
		len(r.Code) + len(r.Reason) + len(r.Kind) + len(r.RemedyKind) + len(r.Status)
	for _, s := range r.Addresses {
		n += len(s) + 16
	}
	for _, s := range r.Redirects {
		n += len(s) + 16
	}
	return int64(n)
}
