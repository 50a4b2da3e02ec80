package app

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A batch the database refuses is retried, first, at every flush; its
// error reached only OnError, which the App never set, so a permanent
// error (a column the schema lacks, a constraint) retried for ever with
// no reason anywhere. Now the App's writers log it: the first, then at
// most one line every 30 s, saying how many failed meanwhile.
func TestLogWritersSayWhyABatchFailed(t *testing.T) {
	var out bytes.Buffer
	a := &App{log: slog.New(slog.NewTextHandler(&out, nil))}
	report := a.logWriterOptions("console.db", "refusals", refusalLogName).OnError
	if report == nil {
		t.Fatal("the App's log writers have no OnError: a failed batch's reason is never said")
	}
	now := time.Unix(1000, 0)
	batchErrorClock = func() time.Time { return now }
	defer func() { batchErrorClock = time.Now }()
	report(errors.New("no such column: kind"))
	for range 5 {
		now = now.Add(time.Second)
		report(errors.New("no such column: kind"))
	}
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Fatalf("%d lines for 6 failures within 5 s, want the first only:\n%s", n, &out)
	}
	if !strings.Contains(out.String(), "refusal log: a batch failed") || !strings.Contains(out.String(), "no such column: kind") {
		t.Errorf("the line does not say which log and why:\n%s", &out)
	}
	now = now.Add(30 * time.Second)
	report(errors.New("no such column: kind"))
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "failed_since_last_line=5") {
		t.Errorf("30 s later, want a second line counting the 5 failures not logged:\n%s", &out)
	}
}
