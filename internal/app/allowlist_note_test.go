package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

func TestNaturalCompare(t *testing.T) {
	got := []string{"host10.example.com", "host2.example.com", "host1.example.com", "a.example.com", "host02.example.com", "host2.example.com:8080", "10.0.0.10", "10.0.0.9"}
	slices.SortFunc(got, NaturalCompare)
	want := []string{"10.0.0.9", "10.0.0.10", "a.example.com", "host1.example.com", "host02.example.com", "host2.example.com", "host2.example.com:8080", "host10.example.com"}
	if !slices.Equal(got, want) {
		t.Fatalf("natural order\n got %q\nwant %q", got, want)
	}
}

func TestAllowlistIsInNaturalOrder(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	if _, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"host10.example.com\nhost2.example.com\nhost1.example.com"}, Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	st, err := ta.Allowlist(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(EntryTexts(st.Rows), " "); got != "host1.example.com host2.example.com host10.example.com" {
		t.Fatalf("order %q", got)
	}
	for i, r := range st.Rows {
		if st.Entries[i].String() != r.Entry {
			t.Fatalf("entries and rows out of step at %d", i)
		}
	}
}

func TestSetEntryNote(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	res, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"status.example.com"}, Note: "ticket 1", Actor: "ada", Version: 0})
	if err != nil {
		t.Fatal(err)
	}
	reloads := ta.reloads.Load()
	v, err := ta.SetEntryNote(ctx, SetEntryNote{Entry: "Status.Example.com.", Note: " ticket 2 ", Actor: "bob", Version: res.Version})
	if err != nil || v <= res.Version {
		t.Fatalf("set note: v%d %v", v, err)
	}
	st, _ := ta.Allowlist(ctx)
	if st.Rows[0].Note != "ticket 2" {
		t.Fatalf("note %q", st.Rows[0].Note)
	}
	audits := ta.audits(t)
	last := audits[len(audits)-1]
	if last.Action != ActionAllowlistNote || last.Actor != "bob" || last.Target != "status.example.com" ||
		last.Before != "status.example.com (note: ticket 1)" || last.After != "status.example.com (note: ticket 2)" {
		t.Fatalf("audit %+v", last)
	}
	if ta.reloads.Load() != reloads {
		t.Error("a note change reloaded the guard")
	}
	// The same note again: no write, no record.
	if v2, err := ta.SetEntryNote(ctx, SetEntryNote{Entry: "status.example.com", Note: "ticket 2", Actor: "bob", Version: v}); err != nil || v2 != v {
		t.Fatalf("unchanged note: v%d %v", v2, err)
	}
	if n := len(ta.audits(t)); n != len(audits) {
		t.Error("an unchanged note was audited")
	}
	var conflict *ConflictError
	if _, err := ta.SetEntryNote(ctx, SetEntryNote{Entry: "status.example.com", Note: "x", Actor: "bob", Version: res.Version}); !errors.As(err, &conflict) {
		t.Errorf("stale version: %v", err)
	}
	var invalid *ValidationError
	if _, err := ta.SetEntryNote(ctx, SetEntryNote{Entry: "status.example.com", Note: strings.Repeat("n", MaxNoteRunes+1), Actor: "bob", Version: v}); !errors.As(err, &invalid) {
		t.Errorf("long note: %v", err)
	}
	var missing *NotFoundError
	if _, err := ta.SetEntryNote(ctx, SetEntryNote{Entry: "other.example.com", Note: "x", Actor: "bob", Version: v}); !errors.As(err, &missing) {
		t.Errorf("unknown entry: %v", err)
	}
	if st, _ := ta.Allowlist(ctx); st.Rows[0].Note != "ticket 2" || len(ta.audits(t)) != len(audits) {
		t.Error("a refused note change changed something")
	}
}

// The same host listed in the default scope and scoped to one agent is
// two rows with two notes: editing the default scope's note leaves the
// scoped row's alone.
func TestSetEntryNoteChangesOneScopesRow(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	if _, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"status.example.com"}, Note: "everyone", Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	if _, err := ta.AddEntries(ctx, AddEntries{Entries: []string{"status.example.com"}, Scope: guard.Scope{Agents: []string{"helpdesk-bot"}}, Note: "the bot's", Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	if _, err := ta.SetEntryNote(ctx, SetEntryNote{Entry: "status.example.com", Note: "edited", Actor: "bob", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	rows, err := ta.store.ListAllowlist(ctx)
	if err != nil {
		t.Fatal(err)
	}
	notes := map[string]string{}
	for _, r := range rows {
		notes[r.ScopeKey] = r.Note
	}
	if len(rows) != 2 || notes[""] != "edited" || notes[guard.Scope{Agents: []string{"helpdesk-bot"}}.Key()] != "the bot's" {
		t.Fatalf("notes by scope after editing the default scope's: %q", notes)
	}
}
