package models

import (
	"path/filepath"
	"testing"
	"time"
)

// TestRefusalTextsFollowTheirRefusals: the search text is written with
// its refusal, purged with it, and filled on open for refusals stored
// without one (by a version from before the table).
func TestRefusalTextsFollowTheirRefusals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbound.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.InsertRefusals(ctx, []Refusal{{Time: old, URL: "https://Old.example/"}, {URL: "https://New.example/"}}); err != nil {
		t.Fatal(err)
	}
	texts := func(s *Store) int64 {
		var n int64
		if err := s.r.Table("refusal_texts").Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := texts(s); n != 2 {
		t.Fatalf("%d texts for 2 refusals", n)
	}
	if n, err := s.PurgeRefusalsBefore(ctx, old.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if n := texts(s); n != 1 {
		t.Fatalf("%d texts after purging one of 2 refusals", n)
	}
	// A refusal written without its text, as an older version wrote them.
	if err := s.w.Exec("INSERT INTO refusals (time, url, message) VALUES (?, ?, ?)", old, "https://Legacy.example/", "Written before search").Error; err != nil {
		t.Fatal(err)
	}
	// The database is now as one from before search: migration 5 has not run.
	if err := s.w.Exec("DELETE FROM schema_migrations WHERE version >= 5").Error; err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, _, err := s.ListRefusals(ctx, RefusalQuery{Search: "legacy.EXAMPLE before"})
	if err != nil || len(rows) != 1 || rows[0].URL != "https://Legacy.example/" || texts(s) != 2 {
		t.Fatalf("after reopening: %v %+v, %d texts", err, rows, texts(s))
	}
}
