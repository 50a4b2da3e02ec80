package models

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Finding 4: the proxy stored a 900 KB URL whole, and the queue was
// bounded in rows, so a stall with 8 KB URLs grew it past a gigabyte.
func TestLongValuesAreCutBeforeTheyAreQueued(t *testing.T) {
	s := openTestStore(t)
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: time.Hour, FlushBatch: 1 << 30})
	huge := "https://evil.example/" + strings.Repeat("é", 450_000) // 900 KB, two-byte runes
	redirects := make(StringList, 100)
	for i := range redirects {
		redirects[i] = huge
	}
	w.Write(Refusal{URL: huge, Host: strings.Repeat("h", 1000), Message: strings.Repeat("m", 10_000), Agent: strings.Repeat("a", 1000),
		Ticket: strings.Repeat("t", 1000), Integration: strings.Repeat("i", 1000), Redirects: redirects})
	st := w.Stats()
	if st.QueuedBytes > 300_000 {
		t.Fatalf("one hostile row holds %d bytes in the queue", st.QueuedBytes)
	}
	closeWriter(t, w)
	rows, _, err := s.ListRefusals(testCtx(t), RefusalQuery{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("ListRefusals = %d rows, %v", len(rows), err)
	}
	r := rows[0]
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{{"url", r.URL, MaxURLBytes}, {"host", r.Host, MaxHostBytes}, {"message", r.Message, MaxTextBytes}, {"agent", r.Agent, MaxNameBytes},
		{"ticket", r.Ticket, MaxNameBytes}, {"integration", r.Integration, MaxNameBytes}, {"redirect", r.Redirects[0], MaxURLBytes}} {
		if len(f.v) > f.max || !strings.Contains(f.v, CutMarker) || !utf8.ValidString(f.v) {
			t.Errorf("%s: %d bytes, marker %v, valid UTF-8 %v; want at most %d with the marker", f.name, len(f.v), strings.Contains(f.v, CutMarker), utf8.ValidString(f.v), f.max)
		}
	}
	if !strings.HasPrefix(r.URL, "https://evil.example/é") || !strings.HasSuffix(r.URL, " bytes]") {
		t.Errorf("cut URL %q…%q does not keep its start and say how much was cut", r.URL[:30], r.URL[len(r.URL)-30:])
	}
	if len(r.Redirects) != MaxListItems+1 || r.Redirects[MaxListItems] != "…[68 more]" {
		t.Errorf("redirects: %d kept, last %q; want %d and a count of the rest", len(r.Redirects), r.Redirects[len(r.Redirects)-1], MaxListItems+1)
	}
}

func TestCapStringLeavesShortValuesAlone(t *testing.T) {
	for _, s := range []string{"", "a", strings.Repeat("x", MaxURLBytes)} {
		if got := capString(s, MaxURLBytes); got != s {
			t.Errorf("capString changed a value of %d bytes", len(s))
		}
	}
	if got := capString(strings.Repeat("x", MaxURLBytes+1), MaxURLBytes); len(got) > MaxURLBytes || !strings.HasSuffix(got, "…[cut 20 bytes]") {
		t.Errorf("one byte over: %d bytes, ends %q", len(got), got[len(got)-20:])
	}
}

// Capping is idempotent: a row capped when queued and again when stored
// (a direct insert, a replay of the spill file) keeps what the first cut
// kept, its count of the rest included.
func TestCappingTwiceKeepsTheFirstCut(t *testing.T) {
	redirects := make(StringList, 100)
	for i := range redirects {
		redirects[i] = "https://r.example/" + strings.Repeat("x", 5000)
	}
	r := Refusal{URL: strings.Repeat("u", 10_000), Message: strings.Repeat("m", 10_000), Agent: "a\x00b", Redirects: redirects}
	r.capStrings()
	once := r
	once.Redirects = slices.Clone(r.Redirects)
	r.capStrings()
	if !reflect.DeepEqual(r, once) {
		t.Errorf("capping twice changed the row:\nonce:  %d redirects, last %q\ntwice: %d redirects, last %q",
			len(once.Redirects), once.Redirects[len(once.Redirects)-1], len(r.Redirects), r.Redirects[len(r.Redirects)-1])
	}
}
