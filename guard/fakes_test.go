package guard

import (
	"sync"
	"testing"

	"github.com/outboundhq/outbound/guard/guardtest"
)

// newResolver builds a guardtest.Resolver from name, addresses pairs.
func newResolver(pairs ...any) *guardtest.Resolver {
	r := guardtest.NewResolver()
	for i := 0; i < len(pairs); i += 2 {
		r.Answer(pairs[i].(string), pairs[i+1].([]string)...)
	}
	return r
}

// recordingRecorder keeps every Record.
type recordingRecorder struct {
	mu      sync.Mutex
	records []Record
}

func (r *recordingRecorder) Record(rec Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
}

// All returns every Record, allowed or refused.
func (r *recordingRecorder) All() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.records...)
}

// Events returns the refused Records, the refusal log's rows.
func (r *recordingRecorder) Events() []Record {
	var out []Record
	for _, rec := range r.All() {
		if !rec.Allowed() {
			out = append(out, rec)
		}
	}
	return out
}

// mustPolicy builds a policy from entry strings and settings, or fails.
func mustPolicy(t testing.TB, s Settings, entries ...string) *Policy {
	t.Helper()
	var es []Entry
	for _, text := range entries {
		e, err := ParseEntry(text)
		if err != nil {
			t.Fatalf("ParseEntry(%q): %v", text, err)
		}
		es = append(es, e)
	}
	p, err := NewPolicy(es, s)
	if err != nil {
		t.Fatalf("NewPolicy: %v", err)
	}
	return p
}

// testGuard wires a guard to recording fakes.
type testGuard struct {
	*Guard
	resolver *guardtest.Resolver
	dialer   *guardtest.Dialer
	reports  *recordingRecorder
}

func newTestGuard(t testing.TB, p *Policy, r *guardtest.Resolver) *testGuard {
	t.Helper()
	if r == nil {
		r = newResolver()
	}
	tg := &testGuard{resolver: r, dialer: guardtest.NewDialer(), reports: &recordingRecorder{}}
	tg.Guard = New(Options{Policy: p, Resolver: r, Recorder: tg.reports, Dial: tg.dialer.Dial})
	t.Cleanup(tg.Close)
	return tg
}
