package models

import (
	"errors"
	"slices"
	"testing"
)

func entryNames(t *testing.T, s *Store) []string {
	t.Helper()
	list, err := s.ListAllowlist(testCtx(t))
	if err != nil {
		t.Fatalf("ListAllowlist: %v", err)
	}
	var out []string
	for _, e := range list {
		out = append(out, e.Entry)
	}
	return out
}

func TestAllowlistAddListRemove(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rev, err := s.AddAllowlistEntries(ctx, 0, []AllowlistEntry{
			{Entry: "status.example.com", Note: "status page", AddedBy: "ana"},
			{Entry: "[fd00::5]:8443", AddedBy: "ana"},
			{Entry: "*.docs.example.com", AddedBy: "bo"},
			{Entry: "intranet.corp:8080", AddedBy: "bo"},
		})
		if err != nil {
			t.Fatalf("AddAllowlistEntries: %v", err)
		}
		if rev != 1 {
			t.Errorf("revision after first add = %d, want 1", rev)
		}
		want := []string{"*.docs.example.com", "[fd00::5]:8443", "intranet.corp:8080", "status.example.com"}
		if got := entryNames(t, s); !slices.Equal(got, want) {
			t.Errorf("ListAllowlist = %q, want %q (ordered by entry)", got, want)
		}
		list, _ := s.ListAllowlist(ctx)
		status := list[3]
		if status.Note != "status page" || status.AddedBy != "ana" || status.ID == 0 || status.CreatedAt.IsZero() {
			t.Errorf("stored entry lost fields: %+v", status)
		}

		rev, err = s.RemoveAllowlistEntries(ctx, rev, []string{"intranet.corp:8080", "[fd00::5]:8443", "intranet.corp:8080"})
		if err != nil {
			t.Fatalf("RemoveAllowlistEntries: %v", err)
		}
		if rev != 2 {
			t.Errorf("revision after remove = %d, want 2", rev)
		}
		want = []string{"*.docs.example.com", "status.example.com"}
		if got := entryNames(t, s); !slices.Equal(got, want) {
			t.Errorf("after remove, ListAllowlist = %q, want %q", got, want)
		}
	})
}

func TestAllowlistAddIsAllOrNothing(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		tests := []struct {
			name  string
			batch []AllowlistEntry
			dup   string
		}{
			{"clashes with stored entry", []AllowlistEntry{{Entry: "new.example.com"}, {Entry: "status.example.com"}}, "status.example.com"},
			{"repeated within the batch", []AllowlistEntry{{Entry: "twice.example.com"}, {Entry: "twice.example.com"}}, "twice.example.com"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := openTestStore(t)
				ctx := testCtx(t)
				if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "status.example.com"}}); err != nil {
					t.Fatal(err)
				}
				_, err := s.AddAllowlistEntries(ctx, AnyRevision, tt.batch)
				var dup *DuplicateError
				if !errors.As(err, &dup) || !errors.Is(err, ErrDuplicate) {
					t.Fatalf("err = %v, want *DuplicateError", err)
				}
				if dup.Value != tt.dup {
					t.Errorf("duplicate names %q, want %q", dup.Value, tt.dup)
				}
				if got := entryNames(t, s); !slices.Equal(got, []string{"status.example.com"}) {
					t.Errorf("failed batch left rows behind: %q", got)
				}
				if rev := mustRevision(t, s); rev != 1 {
					t.Errorf("failed batch moved the revision to %d, want 1", rev)
				}
			})
		}
	})
}

func TestAllowlistRemoveUnknownIsAllOrNothing(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		if _, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "a.example.com"}}); err != nil {
			t.Fatal(err)
		}
		_, err := s.RemoveAllowlistEntries(ctx, AnyRevision, []string{"a.example.com", "ghost.example.com"})
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.Value != "ghost.example.com" || !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want *NotFoundError naming ghost.example.com", err)
		}
		if got := entryNames(t, s); !slices.Equal(got, []string{"a.example.com"}) {
			t.Errorf("failed removal still removed rows: %q", got)
		}
	})
}

func TestAllowlistRejectsEmptyInput(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		tests := []struct {
			name string
			call func() error
		}{
			{"add nothing", func() error { _, err := s.AddAllowlistEntries(ctx, AnyRevision, nil); return err }},
			{"add empty entry", func() error {
				_, err := s.AddAllowlistEntries(ctx, AnyRevision, []AllowlistEntry{{Entry: "ok.example.com"}, {Entry: ""}})
				return err
			}},
			{"remove nothing", func() error { _, err := s.RemoveAllowlistEntries(ctx, AnyRevision, nil); return err }},
			{"bad revision", func() error {
				_, err := s.AddAllowlistEntries(ctx, -7, []AllowlistEntry{{Entry: "x.example.com"}})
				return err
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.call(); err == nil {
					t.Fatal("want an error")
				}
			})
		}
		if got := entryNames(t, s); len(got) != 0 {
			t.Errorf("rejected calls stored %q", got)
		}
		if rev := mustRevision(t, s); rev != 0 {
			t.Errorf("rejected calls moved the revision to %d", rev)
		}
	})
}
