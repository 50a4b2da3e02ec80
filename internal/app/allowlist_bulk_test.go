package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

func bulkEntries(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("host-%d.example.com", from+i)
	}
	return out
}

func countAudits(t *testing.T, a *App, action string) int {
	t.Helper()
	n := 0
	var before int64
	for {
		rows, next, err := a.Store().ListAudit(context.Background(), before, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Action == action {
				n++
			}
		}
		if next == 0 {
			return n
		}
		before = next
	}
}

// Finding 5: a bulk change over 5,461 entries committed its entries and
// then lost its audit rows ("too many SQL variables"). Now a change as
// large as the cap commits its audit rows with it, and a failure leaves
// nothing behind for a retry to trip over.
func TestBulkAllowlistChangesKeepTheirAuditRows(t *testing.T) {
	a := openTestApp(t).App
	path := a.Store().Path()
	ctx := context.Background()
	const n = models.MaxAllowlistEntries
	res, err := a.AddEntries(ctx, AddEntries{Entries: bulkEntries(0, n), Actor: "ada", Version: models.AnyRevision})
	if err != nil || len(res.Added) != n {
		t.Fatalf("adding %d entries: %d added, %v", n, len(res.Added), err)
	}
	if got := countAudits(t, a, ActionAllowlistAdd); got != n {
		t.Fatalf("%d audit rows for %d entries added", got, n)
	}
	if _, err := a.RemoveEntries(ctx, RemoveEntries{Entries: bulkEntries(0, n-1), Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatalf("removing %d entries: %v", n-1, err)
	}
	if got := countAudits(t, a, ActionAllowlistRemove); got != n-1 {
		t.Fatalf("%d audit rows for %d entries removed", got, n-1)
	}
	// An audit failure rolls the whole change back: a retry is a clean
	// first attempt, not a pile of duplicates.
	failAudits(t, path)
	if _, err := a.AddEntries(ctx, AddEntries{Entries: bulkEntries(n, 6000), Actor: "ada", Version: models.AnyRevision}); err == nil {
		t.Fatal("an add whose audit failed succeeded")
	}
	if rows, _ := a.Store().ListAllowlist(ctx); len(rows) != 1 {
		t.Fatalf("%d entries after a failed add, want the 1 left before it", len(rows))
	}
}

// Finding 5: a million-line paste was accepted. The list has a cap, and
// the refusal names it and the fix; nothing is stored.
func TestAllowlistCap(t *testing.T) {
	a := openTestApp(t).App
	ctx := context.Background()
	if _, err := a.AddEntries(ctx, AddEntries{Entries: bulkEntries(0, models.MaxAllowlistEntries-5), Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	_, err := a.AddEntries(ctx, AddEntries{Entries: bulkEntries(models.MaxAllowlistEntries, 6), Actor: "ada", Version: models.AnyRevision})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Code != ProblemAllowlistFull {
		t.Fatalf("an add past the cap: %v", err)
	}
	for _, want := range []string{"cap of 10000", "holds 9995 entries", "add at most 5", "*.example.com"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if rows, _ := a.Store().ListAllowlist(ctx); len(rows) != models.MaxAllowlistEntries-5 {
		t.Fatalf("%d entries after a refused add", len(rows))
	}
	// The store checks too, inside the transaction: two adds racing past
	// the app's check cannot both land.
	_, err = a.Store().AddAllowlistEntries(ctx, models.AnyRevision, []models.AllowlistEntry{
		{Entry: "a.example.org"}, {Entry: "b.example.org"}, {Entry: "c.example.org"}, {Entry: "d.example.org"}, {Entry: "e.example.org"}, {Entry: "f.example.org"}})
	var full *models.AllowlistFullError
	if !errors.As(err, &full) {
		t.Fatalf("the store took an add past the cap: %v", err)
	}
}

// An approved access request adds an entry like any other add: on a full
// list it is refused with the cap's problem, nothing is added and the
// request stays pending.
func TestApprovingAccessRespectsTheAllowlistCap(t *testing.T) {
	ta := openTestApp(t)
	ctx := context.Background()
	if _, err := ta.AddEntries(ctx, AddEntries{Entries: bulkEntries(0, models.MaxAllowlistEntries), Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	ta.resolver.Answer("news.example.net", "93.184.216.35")
	ref := storedRefusal(t, ta, "helpdesk-bot", "fetch_url", "https://news.example.net/")
	ar, err := ta.RequestAccess(ctx, RequestAccess{RefusalID: ref.ID, Comment: "ticket 42 needs it", Actor: "sam"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ta.ApproveAccess(ctx, ApproveAccess{ID: ar.ID, Entry: ar.Entry, Scope: scopeOfRequest(ar), Actor: "ada", Version: models.AnyRevision})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Code != ProblemAllowlistFull {
		t.Fatalf("approving on a full list: %v, want the cap's problem", err)
	}
	if rows, _ := ta.store.ListAllowlist(ctx); len(rows) != models.MaxAllowlistEntries {
		t.Fatalf("%d entries after a refused approval, want %d", len(rows), models.MaxAllowlistEntries)
	}
	if got, _ := ta.store.AccessRequestByID(ctx, ar.ID); got.Status != models.AccessPending {
		t.Fatalf("the request is %q after a refused approval, want pending", got.Status)
	}
}
