package models

import (
	"testing"
	"time"
)

// TestRefusedHostsAreStoredInLowerCase: a host kept as it was sent
// ("Evil.Example", from a CONNECT without a port) was missed by the exact
// host filter, which the console lower-cases, so the top-hosts links led
// to an empty log; and a non-ASCII host ("ÄRGER") was found by a substring
// on PostgreSQL but not on SQLite, whose LOWER folds ASCII only. Hosts are
// stored lower-cased, in the log, the refused-host list and the counters
// alike, so every filter finds them the same on both engines (found in
// review).
func TestRefusedHostsAreStoredInLowerCase(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		at := time.Now().UTC()
		if err := s.InsertRefusals(ctx, []Refusal{
			{Time: at, Tool: "proxy", Host: "Evil.Example", Code: "forbidden", Reason: "not_allowlisted"},
			{Time: at, Tool: "proxy", Host: "ÄRGER", Code: "forbidden", Reason: "not_allowlisted"},
		}); err != nil {
			t.Fatal(err)
		}
		for _, q := range []RefusalQuery{
			{Host: "evil.example", HostExact: true},
			{Host: "Evil.Example", HostExact: true},
			{Host: "evil"},
			{Host: "ärger", HostExact: true},
			{Host: "ärger"},
			{Host: "ÄRGER"},              // as the console passes a substring
			{Host: "ÄRG", Tool: "proxy"}, // through the refused-host list
		} {
			rows, _, err := s.ListRefusals(ctx, q)
			if err != nil || len(rows) != 1 {
				t.Errorf("ListRefusals(%+v) = %d rows, %v; want 1", q, len(rows), err)
			}
		}
		top, err := s.TopRefusedHosts(ctx, at.Add(-time.Hour), 5)
		if err != nil || len(top) != 2 || top[0].Host != "evil.example" || top[1].Host != "ärger" {
			t.Errorf("TopRefusedHosts = %+v, %v; want evil.example and ärger", top, err)
		}

		if err := s.InsertWouldRefusals(ctx, []WouldRefusal{{Time: at, Tool: "proxy", Host: "Evil.Example", Code: "forbidden"}}); err != nil {
			t.Fatal(err)
		}
		would, _, err := s.ListWouldRefusals(ctx, RefusalQuery{Host: "evil.example", HostExact: true})
		if err != nil || len(would) != 1 {
			t.Errorf("ListWouldRefusals(exact evil.example) = %d rows, %v; want 1", len(would), err)
		}
	})
}
