package models

import (
	"testing"
	"time"
)

// The Overview's counts are checked against refusals placed on both sides
// of every boundary: the hour and day buckets, the classes, the window of
// the top lists, and the blank host that is no host to list.
func TestRefusalOverviewCounts(t *testing.T) { eachEngine(t, testRefusalOverviewCounts) }

func testRefusalOverviewCounts(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	now := time.Date(2026, 3, 10, 14, 30, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	rows := []Refusal{
		// The current hour (14:00-14:30): one of each class.
		{Time: at(-10 * time.Minute), Host: "a.example", Agent: "bot-1", Tool: "fetch_url", Reason: "not_allowlisted", Kind: "policy"},
		{Time: at(-20 * time.Minute), Host: "10.0.0.1", Agent: "bot-1", Tool: "fetch_url", Reason: "internal_address", Kind: "policy"},
		{Time: at(-29 * time.Minute), Host: "down.example", Agent: "bot-2", Tool: "take_screenshot", Reason: "dns", Kind: "network"},
		// 13:00-14:00, on its first instant: attack-like.
		{Time: time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC), Host: "169.254.169.254", Agent: "bot-1", Tool: "fetch_url", Reason: "metadata", Kind: "policy"},
		// 12:59:59.9: the hour before, not 13:00.
		{Time: time.Date(2026, 3, 10, 12, 59, 59, 900_000_000, time.UTC), Host: "a.example", Agent: "bot-3", Tool: "proxy", Reason: "port", Kind: "policy"},
		// After now: in no bucket.
		{Time: at(time.Minute), Host: "future.example", Agent: "bot-9", Tool: "fetch_url", Reason: "not_allowlisted", Kind: "policy"},
		// Yesterday, outside the 24 hours but inside the days; no host.
		{Time: at(-25 * time.Hour), Host: "", Agent: "bot-2", Tool: "fetch_url", Reason: "bad_url", Kind: "policy"},
		// 40 days ago: in no bucket at all.
		{Time: at(-40 * 24 * time.Hour), Host: "old.example", Agent: "bot-1", Tool: "fetch_url", Reason: "metadata", Kind: "policy"},
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	o, err := s.RefusalOverview(ctx, OverviewQuery{Now: now, Hours: 24, Days: 30, Top: 5, TopSince: now.Add(-24 * time.Hour),
		AttackReasons: []string{"internal_address", "metadata"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Hours) != 24 || len(o.Days) != 30 {
		t.Fatalf("%d hours and %d days, want 24 and 30", len(o.Hours), len(o.Days))
	}
	last := o.Hours[23]
	if !last.Start.Equal(time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)) || !last.End.Equal(last.Start.Add(time.Hour)) {
		t.Errorf("last hour is %v-%v, want 14:00-15:00", last.Start, last.End)
	}
	if last.Attack != 1 || last.Policy != 1 || last.Network != 1 {
		t.Errorf("current hour = %+v, want one attack, one policy, one network", last)
	}
	if h := o.Hours[22]; h.Attack != 1 || h.Total() != 1 {
		t.Errorf("13:00 hour = %+v, want the metadata refusal alone", h)
	}
	if h := o.Hours[21]; h.Policy != 1 || h.Total() != 1 {
		t.Errorf("12:00 hour = %+v, want the port refusal alone", h)
	}
	var hoursTotal int64
	for _, h := range o.Hours {
		hoursTotal += h.Total()
	}
	if hoursTotal != 5 {
		t.Errorf("24 hours hold %d refusals, want 5 (not the future one, not yesterday's)", hoursTotal)
	}
	if d := o.Days[29]; d.Total() != 5 || d.Attack != 2 || d.Network != 1 {
		t.Errorf("today = %+v, want 5 with 2 attack-like and 1 network", d)
	}
	if d := o.Days[28]; d.Total() != 1 || d.Policy != 1 {
		t.Errorf("yesterday = %+v, want the bad URL", d)
	}
	var daysTotal int64
	for _, d := range o.Days {
		daysTotal += d.Total()
	}
	if daysTotal != 6 {
		t.Errorf("30 days hold %d refusals, want 6", daysTotal)
	}
	wantHosts := []NameCount{{"a.example", 2}, {"10.0.0.1", 1}, {"169.254.169.254", 1}, {"down.example", 1}}
	if !equalCounts(o.TopHosts, wantHosts) {
		t.Errorf("top hosts = %v, want %v (no blank host, nothing from the future)", o.TopHosts, wantHosts)
	}
	if want := []NameCount{{"bot-1", 3}, {"bot-2", 1}, {"bot-3", 1}}; !equalCounts(o.TopAgents, want) {
		t.Errorf("top agents = %v, want %v", o.TopAgents, want)
	}
	if want := []NameCount{{"fetch_url", 3}, {"proxy", 1}, {"take_screenshot", 1}}; !equalCounts(o.TopTools, want) {
		t.Errorf("top tools = %v, want %v", o.TopTools, want)
	}
	if len(o.Reasons) != 5 {
		t.Errorf("reasons = %v, want 5 distinct kind and reason pairs", o.Reasons)
	}
}

// An aggregated row (a burst of alike refusals) counts for every refusal
// it stands for, in the buckets, the classes and the top lists, as the
// log's counters count it.
func TestRefusalOverviewCountsAnAggregatedRowsRefusals(t *testing.T) {
	eachEngine(t, testRefusalOverviewCountsAnAggregatedRowsRefusals)
}

func testRefusalOverviewCountsAnAggregatedRowsRefusals(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	now := time.Date(2026, 3, 10, 14, 30, 0, 0, time.UTC)
	last := now.Add(-5 * time.Minute)
	rows := []Refusal{
		{Time: now.Add(-10 * time.Minute), Host: "evil.example", Agent: "bot-1", Tool: "proxy", Reason: "internal_address", Kind: "policy", Count: 1532, LastTime: &last},
		{Time: now.Add(-10 * time.Minute), Host: "a.example", Agent: "bot-2", Tool: "fetch_url", Reason: "not_allowlisted", Kind: "policy"},
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	o, err := s.RefusalOverview(ctx, OverviewQuery{Now: now, Hours: 24, Days: 30, Top: 5, TopSince: now.Add(-24 * time.Hour),
		AttackReasons: []string{"internal_address"}})
	if err != nil {
		t.Fatal(err)
	}
	cur := o.Hours[len(o.Hours)-1]
	if cur.Attack != 1532 || cur.Policy != 1 || o.Days[len(o.Days)-1].Total() != 1533 {
		t.Errorf("this hour: %d attack-like, %d policy; today %d; want 1532, 1 and 1533", cur.Attack, cur.Policy, o.Days[len(o.Days)-1].Total())
	}
	if want := []NameCount{{"evil.example", 1532}, {"a.example", 1}}; !equalCounts(o.TopHosts, want) {
		t.Errorf("top hosts = %v, want %v", o.TopHosts, want)
	}
	if len(o.Reasons) == 0 || o.Reasons[0].Count != 1532 {
		t.Errorf("reasons = %v, want internal_address first with 1532", o.Reasons)
	}
	today, err := s.CountRefusalsSince(ctx, now.Add(-time.Hour))
	if err != nil || today != 1533 {
		t.Errorf("the log's counter says %d, %v; the Overview must agree with it (1533)", today, err)
	}
}

func TestRefusalOverviewRejectsBadRanges(t *testing.T) {
	s := openTestStore(t)
	for _, q := range []OverviewQuery{{Hours: 0, Days: 30, Top: 5}, {Hours: 24, Days: 0, Top: 5}, {Hours: 24, Days: 30, Top: 0}} {
		if _, err := s.RefusalOverview(testCtx(t), q); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

func equalCounts(a, b []NameCount) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A reload counts the current hour again but takes a closed hour from the
// cache until the entry expires.
func TestRefusalOverviewCache(t *testing.T) { eachEngine(t, testRefusalOverviewCache) }

func testRefusalOverviewCache(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	now := time.Date(2026, 3, 10, 14, 30, 0, 0, time.UTC)
	wall := now
	cache := NewOverviewCache(5 * time.Minute)
	cache.now = func() time.Time { return wall }
	q := OverviewQuery{Now: now, Hours: 24, Days: 30, Top: 5, TopSince: now.Add(-24 * time.Hour), Cache: cache}
	if _, err := s.RefusalOverview(ctx, q); err != nil {
		t.Fatal(err)
	}
	late := []Refusal{{Time: now.Add(-2 * time.Hour), Host: "late.example"}, {Time: now.Add(-time.Minute), Host: "now.example"}}
	if err := s.InsertRefusals(ctx, late); err != nil {
		t.Fatal(err)
	}
	o, err := s.RefusalOverview(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if o.Hours[23].Total() != 1 {
		t.Errorf("current hour = %+v, want the new refusal counted at once", o.Hours[23])
	}
	if o.Hours[21].Total() != 0 {
		t.Errorf("12:00 hour = %+v, want the cached count until it expires", o.Hours[21])
	}
	wall = wall.Add(6 * time.Minute)
	if o, err = s.RefusalOverview(ctx, q); err != nil {
		t.Fatal(err)
	}
	if o.Hours[21].Total() != 1 {
		t.Errorf("12:00 hour after expiry = %+v, want the late refusal counted", o.Hours[21])
	}
}
