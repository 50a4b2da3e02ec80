package app

import (
	"testing"

	"github.com/outboundhq/outbound/guard"
)

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

// TestARowCarriesItsRecordsNote: the row that stands for a call's refused
// requests says how many there were; the refusal value is not changed.
func TestARowCarriesItsRecordsNote(t *testing.T) {
	r := &guard.Refusal{Code: guard.CodeForbidden, Reason: guard.ReasonInternalAddress, URL: "http://10.0.0.1/a.png", Message: "10.0.0.1 is an internal address."}
	row := refusalRow(guard.Record{Refusal: r, Note: "The same call was refused 200 requests in all."})
	if row.Message != "10.0.0.1 is an internal address. The same call was refused 200 requests in all." || r.Message != "10.0.0.1 is an internal address." {
		t.Fatalf("row %q, refusal %q", row.Message, r.Message)
	}
	if row := refusalRow(guard.Record{Refusal: r}); row.Message != r.Message {
		t.Fatalf("a row without a note says %q", row.Message)
	}
}
