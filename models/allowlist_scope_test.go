package models

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A database from before scopes has a unique index on the entry alone;
// opening it drops that index, so one entry may be listed in two scopes,
// while (entry, scope) stays unique.
func TestAllowlistScopesMigrateTheOldUniqueIndex(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "outbound.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.w.Exec("CREATE UNIQUE INDEX idx_allowlist_entries_entry ON allowlist_entries(entry)").Error; err != nil {
		t.Fatal(err)
	}
	// A database from before scopes: migration 6 has not run.
	if err := s.w.Exec("DELETE FROM schema_migrations WHERE version >= 6").Error; err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "crm.intranet.corp", CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	scoped := AllowlistEntry{Entry: "crm.intranet.corp", ScopeKey: "agents=;tools=crm", Tools: StringList{"crm"}, Internal: true, CreatedAt: time.Now()}
	if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{scoped}); err != nil {
		t.Fatalf("the same entry in another scope: %v", err)
	}
	if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{scoped}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("the same entry in the same scope: %v", err)
	}
	rows, err := s.ListAllowlist(ctx)
	if err != nil || len(rows) != 2 || rows[1].Tools[0] != "crm" || !rows[1].Internal {
		t.Fatalf("rows: %+v %v", rows, err)
	}
}
