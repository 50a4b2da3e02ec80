package models

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWouldRefusalFiltersAndPages: the would-refuse outcome of the log
// filters by agent, tool, integration, ticket, host (exact or any part,
// in any case), time and words of the URL or message, pages by keyset,
// refuses the filters no allowed request can match, and is kept apart
// from the refusals.
func TestWouldRefusalFiltersAndPages(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		var rows []WouldRefusal
		for i := range 12 {
			r := WouldRefusal{Time: at.Add(time.Duration(i) * time.Minute), Tool: "fetch_url", Agent: "helpdesk", URL: "https://News.Example.net/item", Host: "news.example.net",
				Port: 443, Code: "forbidden", Reason: "not_allowlisted", Message: "news.example.net is not on the outbound allowlist."}
			switch i {
			case 3:
				r.Tool, r.Integration, r.Host, r.URL = "call_integration", "crm", "crm.intranet.corp", "https://crm.intranet.corp/Customers/42"
			case 5:
				r.Agent, r.Ticket = "billing-bot", "SUP-7"
			}
			rows = append(rows, r)
		}
		if err := s.InsertWouldRefusals(ctx, rows); err != nil { // IDs 1 to 12
			t.Fatal(err)
		}
		ids := func(q RefusalQuery) []int64 {
			t.Helper()
			got, _, err := s.ListWouldRefusals(ctx, q)
			if err != nil {
				t.Fatalf("%+v: %v", q, err)
			}
			var out []int64
			for _, r := range got {
				out = append(out, r.ID)
			}
			return out
		}
		for name, c := range map[string]struct {
			q    RefusalQuery
			want []int64
		}{
			"agent":            {RefusalQuery{Agent: "billing-bot"}, []int64{6}},
			"ticket":           {RefusalQuery{Ticket: "SUP-7"}, []int64{6}},
			"integration":      {RefusalQuery{Integration: "crm"}, []int64{4}},
			"tool":             {RefusalQuery{Tool: "call_integration"}, []int64{4}},
			"host part":        {RefusalQuery{Host: "INTRANET"}, []int64{4}},
			"host exact":       {RefusalQuery{Host: "crm.intranet.corp", HostExact: true}, []int64{4}},
			"host exact other": {RefusalQuery{Host: "crm.intranet", HostExact: true}, nil},
			"search any case":  {RefusalQuery{Search: "customers 42"}, []int64{4}},
			"search message":   {RefusalQuery{Search: "OUTBOUND allowlist", Agent: "billing-bot"}, []int64{6}},
			"time":             {RefusalQuery{Since: at.Add(10 * time.Minute)}, []int64{12, 11}},
			"time range":       {RefusalQuery{Since: at.Add(2 * time.Minute), Until: at.Add(4 * time.Minute)}, []int64{4, 3}},
		} {
			if got := ids(c.q); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", name, got, c.want)
			}
		}

		// Keyset pages, newest first, with no row twice or left out.
		var seen []int64
		q := RefusalQuery{Limit: 5}
		for {
			got, next, err := s.ListWouldRefusals(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range got {
				seen = append(seen, r.ID)
			}
			if next == 0 {
				break
			}
			q.BeforeID = next
		}
		if want := []int64{12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}; !slices.Equal(seen, want) {
			t.Fatalf("pages: %v", seen)
		}
		var each []int64
		if err := s.EachWouldRefusal(ctx, RefusalQuery{Agent: "helpdesk"}, func(r *WouldRefusal) error { each = append(each, r.ID); return nil }); err != nil || len(each) != 11 {
			t.Fatalf("EachWouldRefusal: %v %v", each, err)
		}

		for _, bad := range []RefusalQuery{{Status: StatusExpected}, {Unreviewed: true}, {Kind: "network"}, {BeforeID: -1}, {Limit: MaxRefusalPage + 1}} {
			if _, _, err := s.ListWouldRefusals(ctx, bad); err == nil {
				t.Errorf("%+v was accepted", bad)
			}
		}
		if _, _, err := s.ListWouldRefusals(ctx, RefusalQuery{Status: StatusExpected}); err == nil || !strings.Contains(err.Error(), "leave the review filter empty") {
			t.Errorf("the review filter's error does not say what to do: %v", err)
		}
		// Kept apart: the refusal log holds none of them.
		if n := countRefusals(t, s); n != 0 {
			t.Fatalf("would-be refusals counted as %d refusals", n)
		}
		f, err := s.WouldRefusalValues(ctx)
		if err != nil || !slices.Equal(f.Tools, []string{"call_integration", "fetch_url"}) || !slices.Equal(f.Agents, []string{"billing-bot", "helpdesk"}) ||
			!slices.Equal(f.Integrations, []string{"crm"}) {
			t.Fatalf("WouldRefusalValues = %+v, %v", f, err)
		}
		c, err := s.CountWouldRefusals(ctx, at.Add(5*time.Minute))
		if err != nil || c.Requests != 7 || c.Agents != 2 {
			t.Fatalf("CountWouldRefusals = %+v, %v", c, err)
		}
	})
}

// TestWouldRefusalSearchReadsABoundedWindow: a search page reads at most
// its window of rows and its cursor continues below it.
func TestWouldRefusalSearchReadsABoundedWindow(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	defer func(n int64) { wouldScanRows = n }(wouldScanRows)
	wouldScanRows = 10
	var rows []WouldRefusal
	for i := range 30 {
		msg := "filler"
		if i == 2 || i == 25 {
			msg = "needle"
		}
		rows = append(rows, WouldRefusal{URL: "https://x.example/", Message: msg})
	}
	if err := s.InsertWouldRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	var found, cursors []int64
	q := RefusalQuery{Search: "needle"}
	for {
		got, next, err := s.ListWouldRefusals(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			found = append(found, r.ID)
		}
		cursors = append(cursors, next)
		if next == 0 {
			break
		}
		q.BeforeID = next
	}
	if !slices.Equal(found, []int64{26, 3}) || !slices.Equal(cursors, []int64{21, 11, 0}) {
		t.Fatalf("found %v with cursors %v", found, cursors)
	}
}

// TestWouldRefusalTextIsBackfilled: rows stored before migration 10 get
// their search text from the migration.
func TestWouldRefusalTextIsBackfilled(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		if err := s.w.Exec("INSERT INTO would_refusals (time, url, message) VALUES (?, 'https://Old.Example/Path', 'Old Message')", time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}
		if err := backfillWouldRefusalTexts(s.w); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.ListWouldRefusals(ctx, RefusalQuery{Search: "old.example/path message"})
		if err != nil || len(got) != 1 {
			t.Fatalf("the backfilled row is not found: %v %v", got, err)
		}
	})
}

// TestRefusalsFilterByIntegration: a refusal names the integration its
// call was made for; the log filters by it and lists it among its values.
func TestRefusalsFilterByIntegration(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		if err := s.InsertRefusals(ctx, []Refusal{
			{Tool: "call_integration", Integration: "crm", URL: "https://crm.intranet.corp/", Host: "crm.intranet.corp"},
			{Tool: "call_integration", Integration: "billing", URL: "https://crm.intranet.corp/", Host: "crm.intranet.corp"},
			{Tool: "fetch_url", URL: "https://crm.intranet.corp/", Host: "crm.intranet.corp"},
		}); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.ListRefusals(ctx, RefusalQuery{Integration: "crm"})
		if err != nil || len(got) != 1 || got[0].Integration != "crm" || got[0].Tool != "call_integration" {
			t.Fatalf("ListRefusals(integration crm) = %+v, %v", got, err)
		}
		f, err := s.RefusalValues(ctx)
		if err != nil || !slices.Equal(f.Integrations, []string{"billing", "crm"}) {
			t.Fatalf("RefusalValues integrations = %v, %v", f.Integrations, err)
		}
	})
}
