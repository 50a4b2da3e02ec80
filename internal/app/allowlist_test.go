package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

func entryStrings(es []guard.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}

func TestAddEntries(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	ta.resolver.Answer("status.example.com", "93.184.216.34").Answer("other.example.com", "93.184.216.35")

	res, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"Status.Example.com", "intranet.corp:8080"}, Note: " ticket 42 ", Actor: "ada", Version: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(entryStrings(res.Added), " "); got != "status.example.com intranet.corp:8080" || !res.LeftPublicWeb || res.Listed != 2 {
		t.Fatalf("added %q, left PUBLIC WEB %v, listed %d", got, res.LeftPublicWeb, res.Listed)
	}
	if ta.reloads.Load() != 1 {
		t.Fatalf("%d reloads after the add, want 1", ta.reloads.Load())
	}
	if d := ta.Guard().Decide(ctx, "https://other.example.com/"); d.Allowed {
		t.Fatal("the running guard does not enforce the new list")
	}
	audits := ta.audits(t)
	if len(audits) != 2 || audits[0].Action != ActionAllowlistAdd || audits[0].Target != "status.example.com" ||
		audits[0].After != "status.example.com (note: ticket 42)" || audits[0].Actor != "ada" {
		t.Fatalf("audit: %+v", audits)
	}

	tests := []struct {
		name  string
		req   AddEntries
		check func(t *testing.T, err error)
	}{
		{"a stale version is a conflict carrying the current one", AddEntries{Entries: []string{"new.example.com"}, Version: 0}, func(t *testing.T, err error) {
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Expected != 0 || ce.Current != 1 || ce.Section != models.SectionAllowlist {
				t.Fatalf("got %v", err)
			}
		}},
		{"every bad line is named with its fix", AddEntries{Entries: []string{"ok.example.com\nhttps://bad.example.com/\n*.com"}, Version: models.AnyRevision}, func(t *testing.T, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 2 || ve.Problems[0].Line != 2 || ve.Problems[1].Input != "*.com" || ve.Problems[0].Fix == "" {
				t.Fatalf("got %#v", err)
			}
		}},
		{"a form flags an entry already listed", AddEntries{Entries: []string{"status.example.com"}, Version: models.AnyRevision}, func(t *testing.T, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(ve.Problems[0].Problem, "already on the list") {
				t.Fatalf("got %v", err)
			}
		}},
		{"a form flags a repeated line", AddEntries{Entries: []string{"a.example.com", "A.example.com"}, Version: models.AnyRevision}, func(t *testing.T, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Problems[0].Line != 2 {
				t.Fatalf("got %v", err)
			}
		}},
		{"a note on two lines", AddEntries{Entries: []string{"a.example.com"}, Note: "two\nlines", Version: models.AnyRevision}, func(t *testing.T, err error) {
			var ve *ValidationError
			p, ok := Problem{}, false
			if errors.As(err, &ve) {
				p, ok = ve.Field("note")
			}
			if !ok || p.Text() != "The note contains a line break or control character; write it on one line." {
				t.Fatalf("got %v", err)
			}
		}},
		{"a note too long", AddEntries{Entries: []string{"a.example.com"}, Note: strings.Repeat("x", MaxNoteRunes+1), Version: models.AnyRevision}, func(t *testing.T, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(ve.Problems[0].Text(), "keep it under 500") {
				t.Fatalf("got %v", err)
			}
		}},
		{"no entry at all", AddEntries{Entries: []string{"  \n "}, Version: models.AnyRevision}, func(t *testing.T, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Problems[0].Code != ProblemNoEntries {
				t.Fatalf("got %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev, audits, reloads := ta.snapshot(t)
			_, err := ta.AddEntries(ctx, tt.req)
			tt.check(t, err)
			ta.unchanged(t, rev, audits, reloads)
		})
	}
}

func TestAddEntriesIdempotent(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	add := func(entries ...string) (EntriesAdded, error) {
		return ta.AddEntries(ctx, AddEntries{Entries: entries, Actor: "cli:ada", Version: models.AnyRevision, AlreadyListedIsOK: true})
	}
	if _, err := add("a.example.com"); err != nil {
		t.Fatal(err)
	}
	t.Run("only entries already listed: nothing stored, audited or reloaded", func(t *testing.T) {
		rev, audits, reloads := ta.snapshot(t)
		res, err := add("A.example.com.")
		if err != nil || len(res.Added) != 0 || strings.Join(entryStrings(res.AlreadyListed), " ") != "a.example.com" || res.Listed != 1 {
			t.Fatalf("got %+v, %v", res, err)
		}
		ta.unchanged(t, rev, audits, reloads)
	})
	t.Run("new and listed together: the new are added once", func(t *testing.T) {
		res, err := add("a.example.com", "b.example.com", "b.example.com")
		if err != nil || strings.Join(entryStrings(res.Added), " ") != "b.example.com" || len(res.AlreadyListed) != 1 || res.Listed != 2 || res.LeftPublicWeb {
			t.Fatalf("got %+v, %v", res, err)
		}
		if got := ta.audits(t); len(got) != 2 || got[1].Target != "b.example.com" {
			t.Fatalf("audit: %+v", got)
		}
	})
	t.Run("a bad entry still refuses the whole add", func(t *testing.T) {
		rev, audits, reloads := ta.snapshot(t)
		_, err := add("c.example.com", "https://bad.example.com/")
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Input != "https://bad.example.com/" {
			t.Fatalf("got %v", err)
		}
		ta.unchanged(t, rev, audits, reloads)
	})
}

func TestRemoveEntries(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	if _, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"a.example.com", "b.example.com"}, Note: "why", Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	t.Run("an entry not listed is named and nothing is removed", func(t *testing.T) {
		rev, audits, reloads := ta.snapshot(t)
		_, err := ta.RemoveEntries(ctx, RemoveEntries{Entries: []string{"a.example.com", "nothere.example.com"}, Actor: "ada", Version: models.AnyRevision})
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.Name != "nothere.example.com" || nf.Kind != "allowlist entry" {
			t.Fatalf("got %v", err)
		}
		ta.unchanged(t, rev, audits, reloads)
	})
	t.Run("a stale version is a conflict", func(t *testing.T) {
		rev, audits, reloads := ta.snapshot(t)
		_, err := ta.RemoveEntries(ctx, RemoveEntries{Entries: []string{"a.example.com"}, Version: 0})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Current != 1 {
			t.Fatalf("got %v", err)
		}
		ta.unchanged(t, rev, audits, reloads)
	})
	t.Run("as typed, down to PUBLIC WEB", func(t *testing.T) {
		res, err := ta.RemoveEntries(ctx, RemoveEntries{Entries: []string{"A.EXAMPLE.COM", "b.example.com."}, Actor: "ada", Version: 1})
		if err != nil || len(res.Removed) != 2 || !res.PublicWeb || res.Listed != 0 {
			t.Fatalf("got %+v, %v", res, err)
		}
		got := ta.audits(t)
		last := got[len(got)-1]
		if last.Action != ActionAllowlistRemove || last.Target != "b.example.com" || last.Before != "b.example.com (note: why)" {
			t.Fatalf("audit: %+v", last)
		}
		if !ta.Guard().Policy().PublicWeb() {
			t.Fatal("the running guard still enforces the removed entries")
		}
	})
}

// TestChangeSavedButNotReloaded: a change that commits while the stored
// configuration does not load (a bad value written behind the app's
// back) is reported as saved and not in force, with its result.
func TestChangeSavedButNotReloaded(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	if _, err := ta.store.SetSettings(ctx, models.AnyRevision, "hand", map[string]string{"timeout": "soon"}); err != nil {
		t.Fatal(err)
	}
	res, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"a.example.com"}, Actor: "ada", Version: models.AnyRevision})
	var nr *NotReloadedError
	if !errors.As(err, &nr) || len(res.Added) != 1 || !strings.Contains(nr.Error(), "was saved") {
		t.Fatalf("got %+v, %v", res, err)
	}
	if rows, _ := ta.store.ListAllowlist(ctx); len(rows) != 1 || len(ta.audits(t)) != 1 {
		t.Fatal("the change or its audit record is missing")
	}
	if !ta.Guard().Policy().PublicWeb() {
		t.Fatal("a policy was loaded from a configuration that does not load")
	}
}
