package app

import (
	"context"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

// Review finding: a retention cutoff was "days ago" on the local
// calendar, so on a server in a zone with summer time a retention
// spanning the change to it was an hour short, and the purge deleted
// refusals (and allowed decisions) of the last hour still within it.
func TestRetentionIsDaysOf24HoursInAZoneWithSummerTime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// Summer time (CEST) now; before 29 March, winter time (CET).
	now := time.Date(2026, 4, 2, 14, 0, 0, 0, berlin)
	purgeClock = func() time.Time { return now }
	t.Cleanup(func() { purgeClock = time.Now })
	ta := openTestApp(t)
	refusalDays, decisionDays := ta.Settings().RetentionDays, ta.Settings().DecisionRetentionDays
	refusalEdge := now.Add(-time.Duration(refusalDays) * 24 * time.Hour)
	decisionEdge := now.Add(-time.Duration(decisionDays) * 24 * time.Hour)
	if refusalEdge.Hour() == now.Hour() || decisionEdge.Hour() == now.Hour() {
		t.Fatalf("%d and %d days before %v are %v and %v: the test needs the change to summer time between", refusalDays, decisionDays, now, refusalEdge, decisionEdge)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := ta.store.InsertRefusals(ctx, []models.Refusal{
		{Time: refusalEdge.Add(-30 * time.Minute), Host: "expired.example"},
		{Time: refusalEdge.Add(30 * time.Minute), Host: "kept.example"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := ta.store.InsertDecisions(ctx, []models.Decision{
		{Time: decisionEdge.Add(-30 * time.Minute), Ticket: "SUP-1", Host: "expired.example", Outcome: models.DecisionAllowed},
		{Time: decisionEdge.Add(30 * time.Minute), Ticket: "SUP-1", Host: "kept.example", Outcome: models.DecisionAllowed},
	}); err != nil {
		t.Fatal(err)
	}
	hosts := func() (refused, allowed []string) {
		rows, _, err := ta.store.ListRefusals(ctx, models.RefusalQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			refused = append(refused, r.Host)
		}
		decisions, _, err := ta.store.DecisionsOfTicket(ctx, "SUP-1", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range decisions {
			allowed = append(allowed, d.Host)
		}
		return refused, allowed
	}
	done := make(chan struct{})
	go func() { ta.PurgeLoop(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		refused, allowed := hosts()
		if len(refused) <= 1 && len(allowed) <= 1 {
			if len(refused) != 1 || refused[0] != "kept.example" || len(allowed) != 1 || allowed[0] != "kept.example" {
				t.Errorf("after the purge the refusals are of %q and the decisions of %q; want kept.example, 30 minutes within the retention, in each", refused, allowed)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no purge: the refusals are of %q and the decisions of %q", refused, allowed)
		}
	}
}
