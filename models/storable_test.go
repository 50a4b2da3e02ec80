package models

import (
	"testing"
	"time"
)

// A NUL byte or invalid UTF-8 in any logged field (an agent can send
// "\u0000" in a JSON argument) is stored as U+FFFD on both stores, and
// the rows after it are stored too: PostgreSQL refuses both in text, and
// a batch that failed for it would be retried for ever ahead of the rest.
func TestTextAnAgentCanSendIsStoredAndDoesNotStopTheLog(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		bad := "a\x00b\xffc"
		w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond})
		w.Write(Refusal{URL: "http://x.example/" + bad, Host: "x" + bad, Agent: bad, Ticket: bad, Thread: bad, Trigger: bad,
			Message: bad, Redirects: StringList{bad}, Code: "forbidden", Reason: "bad_url"})
		w.Write(Refusal{URL: "http://after.example/", Host: "after.example", Code: "forbidden", Reason: "internal_name"})
		if err := w.Close(ctx); err != nil {
			t.Fatalf("the writer could not store the rows: %v", err)
		}
		if err := s.InsertRefusals(ctx, []Refusal{{URL: bad, Host: bad, Code: "forbidden", Reason: "bad_url"}}); err != nil {
			t.Fatalf("a direct insert of the same text: %v", err)
		}
		if err := s.InsertDecisions(ctx, []Decision{{URL: bad, Host: bad, Tool: bad, Agent: bad, Ticket: "SUP-1" + bad}}); err != nil {
			t.Fatalf("a decision with the same text: %v", err)
		}
		rows, _, err := s.ListRefusals(ctx, RefusalQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 {
			t.Fatalf("%d rows stored, want 3", len(rows))
		}
		for _, r := range rows {
			if r.Host != "after.example" && r.Agent != "" && r.Agent != "a\uFFFDb\uFFFDc" {
				t.Errorf("agent stored as %q, want a\\uFFFDb\\uFFFDc", r.Agent)
			}
		}
	})
}
