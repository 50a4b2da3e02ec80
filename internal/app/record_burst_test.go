package app

import "testing"

// TestWrongProxyCredentialsAreEachCountedButLoggedOnce: every request with
// a wrong credential is a decision (one log line and one metric increment
// each), but a burst from one client writes one refusal-log row, not one
// per attempt.
func TestWrongProxyCredentialsAreEachCountedButLoggedOnce(t *testing.T) {
	e := newRecordEnv(t)
	before := e.sink.counts(t)
	const attempts = 5
	for range attempts {
		if status := e.viaProxy(t, "GET", "http://site.example.com/page", "wrong-token"); status != 407 {
			t.Fatalf("a wrong credential was answered %d, want 407", status)
		}
	}
	after := e.sink.counts(t)
	if n := len(after.metrics) - len(before.metrics); n != attempts {
		t.Fatalf("%d metric increments for %d wrong credentials, want one each", n, attempts)
	}
	if n := len(after.lines) - len(before.lines); n != attempts {
		t.Fatalf("%d log lines for %d wrong credentials, want one each", n, attempts)
	}
	if n := len(after.rows) - len(before.rows); n != 1 {
		t.Fatalf("%d refusal rows for a burst of %d wrong credentials from one client, want 1", n, attempts)
	}
}
