package models

import (
	"context"
	"testing"
	"time"
)

// TestAuditCommitsWithItsChange: a configuration change and its audit
// records are one transaction. A change that fails leaves no record, and a
// record that cannot be written undoes the change.
func TestAuditCommitsWithItsChange(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		ctx := context.Background()
		s := openTestStore(t)
		rec := Audit{Actor: "ada", Action: "allowlist.add", Target: "status.example.com", After: "status.example.com"}
		if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "status.example.com", CreatedAt: time.Now()}}, rec); err != nil {
			t.Fatal(err)
		}
		if got := auditCount(t, s); got != 1 {
			t.Fatalf("after one add: %d audit records, want 1", got)
		}

		// A duplicate fails the change: its record must not be written.
		if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "status.example.com", CreatedAt: time.Now()}}, rec); err == nil {
			t.Fatal("duplicate entry added")
		}
		if got := auditCount(t, s); got != 1 {
			t.Fatalf("a failed change left an audit record: %d records, want 1", got)
		}

		// A record that cannot be written rolls the change back.
		if err := failAuditWrites(t, s); err != nil {
			t.Fatal(err)
		}
		rev, _ := s.Revision(ctx)
		if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "docs.example.com", CreatedAt: time.Now()}}, Audit{Actor: "ada", Action: "allowlist.add", Target: "docs.example.com"}); err == nil {
			t.Fatal("change committed although its audit record failed")
		}
		rows, err := s.ListAllowlist(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("allowlist has %d entries after a change whose audit failed, want 1 (rolled back)", len(rows))
		}
		if after, _ := s.Revision(ctx); after != rev {
			t.Fatalf("revision moved from %d to %d for a rolled-back change", rev, after)
		}
	})
}

func auditCount(t *testing.T, s *Store) int {
	t.Helper()
	records, _, err := s.ListAudit(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return len(records)
}
