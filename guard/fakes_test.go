package guard

import (
	"github.com/outboundhq/outbound/guard/guardtest"
	"sync"
	"testing"
)

// newResolver builds a guardtest.Resolver from name, addresses pairs.
func newResolver(pairs ...any) *guardtest.Resolver {
	r := guardtest.NewResolver()
	for i := 0; i < len(pairs); i += 2 {
		r.Answer(pairs[i].(string), pairs[i+1].([]string)...)
	}
	return r
}

// recordingReporter keeps every reported event.
type recordingReporter struct {
	mu     sync.Mutex
	events []Event
}

func (r *recordingReporter) Report(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recordingReporter) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
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
	reports  *recordingReporter
}

func newTestGuard(t testing.TB, p *Policy, r *guardtest.Resolver) *testGuard {
	t.Helper()
	if r == nil {
		r = newResolver()
	}
	tg := &testGuard{resolver: r, dialer: guardtest.NewDialer(), reports: &recordingReporter{}}
	tg.Guard = New(Options{Policy: p, Resolver: r, Reporter: tg.reports, Dial: tg.dialer.Dial})
	t.Cleanup(tg.Close)
	return tg
}
