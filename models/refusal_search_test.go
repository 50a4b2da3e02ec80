package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// A search limited to an old day starts its windows at the top of the
// day's ID range, not at the newest row, and ends at the range's bottom:
// the first page already holds the day's match, and paging stops there
// instead of walking empty windows down to the log's first row.
func TestSearchOfAnOldDayStartsAndEndsAtItsIDRange(t *testing.T) {
	eachEngine(t, testSearchOfAnOldDayStartsAndEndsAtItsIDRange)
}

func testSearchOfAnOldDayStartsAndEndsAtItsIDRange(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	defer func(n int64) { searchScanRows = n }(searchScanRows)
	searchScanRows = 10
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var rows []Refusal
	// IDs 1-30 on the first day, 31-60 on the second (the old day
	// searched), 61-160 on later days: ten windows of newer rows.
	for i := range 160 {
		day := 2 + (i-60)/25
		switch {
		case i < 30:
			day = 0
		case i < 60:
			day = 1
		}
		msg := "filler"
		if i == 5 || i == 44 || i == 140 {
			msg = "needle"
		}
		rows = append(rows, Refusal{Time: base.Add(time.Duration(day)*24*time.Hour + time.Duration(i)*time.Minute), URL: "https://x.example/", Message: msg})
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	q := RefusalQuery{Search: "needle", Since: base.Add(24 * time.Hour), Until: base.Add(48 * time.Hour)}
	got, next, err := s.ListRefusals(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// The day's rows are IDs 31-60: windows [51,61) and [41,51) hold
	// them, so the match (row 45) is on the second page at the latest,
	// and no page goes below ID 31 for more.
	var pages [][]int64
	var cursors []int64
	for {
		var ids []int64
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		pages, cursors = append(pages, ids), append(cursors, next)
		if next == 0 || len(pages) > 20 {
			break
		}
		q.BeforeID = next
		if got, next, err = s.ListRefusals(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if isPostgres(s.r) {
		// The trigram index answers a rare word below the first window
		// (refusal_search_pg.go): the day's one match and the end at once.
		if len(pages) != 1 || !slices.Equal(pages[0], []int64{45}) || cursors[0] != 0 {
			t.Fatalf("pages %v, cursors %v; want row 45 and the end on the first page", pages, cursors)
		}
		return
	}
	if len(pages) != 3 || !slices.Equal(slices.Concat(pages...), []int64{45}) || len(pages[1]) != 1 || cursors[0] != 51 || cursors[1] != 41 || cursors[2] != 0 {
		t.Fatalf("pages %v, cursors %v; want windows [51,61), [41,51), [31,41) with row 45 in the second, then the end", pages, cursors)
	}
}

// Every way a search page is answered (a window read in order; on
// PostgreSQL the first window, the trigram index, the rest of the
// window) gives the same rows in the same order as reading every row:
// followed page by page, with pages of any size, alone or with other
// filters and a time range.
func TestSearchPagesHoldEveryMatchInOrder(t *testing.T) {
	eachEngine(t, testSearchPagesHoldEveryMatchInOrder)
}

func testSearchPagesHoldEveryMatchInOrder(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	defer func(n, p, f, m int64) {
		searchScanRows, pgScanRows, pgFirstWindow, trigramMaxRows = n, p, f, m
	}(searchScanRows, pgScanRows, pgFirstWindow, trigramMaxRows)
	searchScanRows, pgScanRows, pgFirstWindow = 40, 40, 10
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var rows []Refusal
	for i := range 400 {
		r := Refusal{Time: base.Add(time.Duration(i) * 10 * time.Minute), Code: []string{"bad_port", "not_allowlisted"}[i%2],
			URL: fmt.Sprintf("https://svc-%d.example.com/ticket/%d", i%7, i), Message: "Refused: on purpose"}
		switch {
		case i >= 300: // a flood of newer rows without the base log's words
			r.URL, r.Code, r.Message = fmt.Sprintf("https://flood-%d.attacker.example/p/%d", i%5, i), "not_allowlisted", "refused"
		case i == 17:
			r.Message = "Refused: the one NEEDLE"
		case i%60 == 3:
			r.Redirects = StringList{"https://pin.example/x"}
		}
		rows = append(rows, r)
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	var all []Refusal
	if err := s.r.Order("id DESC").Find(&all).Error; err != nil {
		t.Fatal(err)
	}
	// The trigram index's limit as it is (it answers every word of this
	// small log), and low (it answers the rare words and gives up on the
	// others, which the store then remembers), on a new store each.
	for _, maxRows := range []int64{trigramMaxRows, 4} {
		trigramMaxRows = maxRows
		s.searches = searchMemo{}
		checkSearchPages(t, s, all, base)
	}
}

func checkSearchPages(t *testing.T, s *Store, all []Refusal, base time.Time) {
	for _, search := range []string{"needle", "pin.example", "ticket", "Refused BAD_PORT", "attacker /p/", "svc-3.example.com/ticket", "no-such-text", "on needle", "/1", "p%s", "o_p"} {
		for _, q := range []RefusalQuery{
			{Search: search},
			{Search: search, Code: "bad_port"},
			{Search: search, Since: base.Add(10 * time.Hour), Until: base.Add(40 * time.Hour)},
		} {
			words, _ := SearchWords(search)
			var want []int64
			for _, r := range all {
				text := searchText(&r)
				ok := (q.Code == "" || r.Code == q.Code) && (q.Since.IsZero() || !r.Time.Before(q.Since)) && (q.Until.IsZero() || r.Time.Before(q.Until))
				for _, w := range words {
					ok = ok && strings.Contains(text, w)
				}
				if ok {
					want = append(want, r.ID)
				}
			}
			for _, limit := range []int{7, 50} {
				q.Limit = limit
				if got := pagedIDs(t, s, q); !slices.Equal(got, want) {
					t.Errorf("%q code %q since %v, pages of %d (index limit %d): got %v, want %v",
						search, q.Code, !q.Since.IsZero(), limit, trigramMaxRows, got, want)
				}
			}
		}
	}
}

// On PostgreSQL a word in few rows is looked up in the trigram index: its
// first page holds the newest matches from anywhere below the cursor, or
// all of them and the end, where a window read in order would have ended
// short. A word in more rows is read window by window, as on SQLite, and
// the page that ends short says where its window ended.
func TestSearchOnPostgresAsksTheTrigramIndexForRareWords(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		if !testOnPostgres(t) {
			t.Skip("the trigram index is PostgreSQL's")
		}
		s := openTestStore(t)
		ctx := testCtx(t)
		defer func(n, f, m int64) { pgScanRows, pgFirstWindow, trigramMaxRows = n, f, m }(pgScanRows, pgFirstWindow, trigramMaxRows)
		pgScanRows, pgFirstWindow, trigramMaxRows = 40, 10, 4
		var rows []Refusal
		for i := range 200 {
			msg := "filler"
			switch i {
			case 4, 9:
				msg = "needle"
			case 20, 21, 22, 23, 24, 25:
				msg = "common" // six rows: more than trigramMaxRows
			}
			rows = append(rows, Refusal{URL: "https://x.example/", Message: msg})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		got, next, err := s.ListRefusals(ctx, RefusalQuery{Search: "needle"})
		if err != nil || len(got) != 2 || got[0].ID != 10 || got[1].ID != 5 || next != 0 {
			t.Fatalf("a rare word: %d rows, next %d, %v; want rows 10 and 5 and the end on the first page", len(got), next, err)
		}
		got, next, err = s.ListRefusals(ctx, RefusalQuery{Search: "needle", Limit: 1})
		if err != nil || len(got) != 1 || got[0].ID != 10 || next != 10 {
			t.Fatalf("a rare word, pages of 1: %d rows, next %d, %v; want row 10, then more below it", len(got), next, err)
		}
		// A common word: the index finds more rows than it may return, the
		// page reads its window, and the store remembers the search, so
		// that its next pages read their windows at once.
		got, next, err = s.ListRefusals(ctx, RefusalQuery{Search: "common"})
		if err != nil || len(got) != 0 || next != 161 || !s.searches.slowFor([]string{"common"}) || s.searches.slowFor([]string{"needle"}) {
			t.Fatalf("a common word: %d rows, next %d, %v, remembered %v; want an empty window of 40 rows, continued below row 161",
				len(got), next, err, s.searches.slowFor([]string{"common"}))
		}
		// Past its budget the index's statement is cancelled, in a
		// savepoint: the page's transaction goes on.
		err = serialOnPostgres(s.r.WithContext(ctx), func(tx *gorm.DB) error {
			if _, err := trigramLookup(tx, "pg_sleep(0.01) IS NOT NULL", nil, 0, 1000); !errors.Is(err, errTrigramTooSlow) {
				t.Errorf("a lookup past its budget: %v, want errTrigramTooSlow", err)
			}
			var one int
			return tx.Raw("SELECT 1").Scan(&one).Error
		})
		if err != nil {
			t.Fatalf("the transaction after a cancelled lookup: %v", err)
		}
		if ok := indexableWords([]string{"ab", "needle"}); ok {
			t.Fatal("a word of two letters has no trigram to look up, yet the index would be asked")
		}
	})
}

// Newer pages of a search reach the newer matches from an Older page the
// trigram index fetched from far below: each reads its window, an empty
// one says so, and NewerWindow gives the cursor of the next (found in
// review: the first empty window was a dead end).
func TestNewerSearchPagesClimbFromFarBelow(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		defer func(a, n, f, m int64) { searchScanRows, pgScanRows, pgFirstWindow, trigramMaxRows = a, n, f, m }(searchScanRows, pgScanRows, pgFirstWindow, trigramMaxRows)
		searchScanRows, pgScanRows, pgFirstWindow, trigramMaxRows = 40, 40, 10, 4
		var rows []Refusal
		for i := range 200 {
			msg := "filler"
			if i == 4 || i == 194 {
				msg = "needle" // IDs 5 and 195
			}
			rows = append(rows, Refusal{URL: "https://x.example/", Message: msg})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		q := RefusalQuery{Search: "needle", Limit: 1}
		if w := s.NewerWindow(q); w != 40 {
			t.Fatalf("NewerWindow = %d; want the window, 40", w)
		}
		if w := s.NewerWindow(RefusalQuery{Search: "needle", Ticket: "SUP-1"}); w != 0 {
			t.Fatalf("NewerWindow within a ticket = %d; want 0 (a ticket's rows are read whole)", w)
		}
		after, empty := int64(5), 0
		for {
			got, newer, err := s.ListRefusalsAfter(ctx, q, after)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > 0 {
				if got[0].ID != 195 || empty != 4 {
					t.Fatalf("Newer reached row %d after %d empty windows; want row 195 after 4", got[0].ID, empty)
				}
				return
			}
			if !newer {
				t.Fatalf("Newer from %d: no rows and no newer ones; row 195 was never reached", after)
			}
			empty++
			after += s.NewerWindow(q)
		}
	})
}

// A search may hold any bytes a URL's query can carry, a NUL and bytes
// that are not UTF-8 among them. PostgreSQL refuses both in text, so such
// a search failed there (the log page showed an error where SQLite
// answered); it is read as the stored text is written (storable), so it
// finds on both engines what a refusal with the same bytes stored.
func TestSearchWithANulOrBytesThatAreNotUTF8(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rows := []Refusal{
			{URL: "https://a.example/caf\xe9", Message: "Refused: one"},
			{URL: "https://b.example/nul\x00here", Message: "Refused: two"},
			{URL: "https://c.example/plain", Message: "Refused: three"},
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		for search, want := range map[string][]string{
			"caf\xe9":        {"https://a.example/caf\uFFFD"},
			"nul\x00here":    {"https://b.example/nul\uFFFDhere"},
			"\x00":           {"https://b.example/nul\uFFFDhere", "https://a.example/caf\uFFFD"}, // both hold U+FFFD
			"plain \xff\x00": nil,
		} {
			got, _, err := s.ListRefusals(ctx, RefusalQuery{Search: search})
			if err != nil {
				t.Errorf("search %q: %v", search, err)
				continue
			}
			var urls []string
			for _, r := range got {
				urls = append(urls, r.URL)
			}
			if !slices.Equal(urls, want) {
				t.Errorf("search %q found %q, want %q", search, urls, want)
			}
		}
	})
}

// A filter's value may hold the same bytes as a search (a shared link
// with ?host=%00, ?agent=%FF): it is read as the stored values are
// written (storable) too. It used to be bound as it came: on SQLite
// "host contains NUL" became "contains anything" (LIKE ends the pattern
// at the NUL), so the page said "filtered" and showed, and exported,
// every row; on PostgreSQL every such filter failed (SQLSTATE 22021).
func TestFiltersWithANulOrBytesThatAreNotUTF8(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rows := []Refusal{
			{URL: "https://a.example/", Host: "a.example", Agent: "bot", Tool: "fetch_url"},
			{URL: "https://b.test/", Host: "b.test", Agent: "bot", Tool: "fetch_url"},
			{URL: "https://c.test/", Host: "c.test", Agent: "bot\x00two", Tool: "fetch_url"},
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			q    RefusalQuery
			want []string
		}{
			{RefusalQuery{Host: "\x00"}, nil},
			{RefusalQuery{Host: "\xff"}, nil},
			{RefusalQuery{Host: "\x00", HostExact: true}, nil},
			{RefusalQuery{Host: "b.\x00"}, nil},
			{RefusalQuery{Agent: "\x00"}, nil},
			{RefusalQuery{Tool: "\xff"}, nil},
			{RefusalQuery{Reason: "\x00", Code: "\xfe"}, nil},
			// The agent stored with a NUL is found by the same bytes.
			{RefusalQuery{Agent: "bot\x00two"}, []string{"c.test"}},
		} {
			got, _, err := s.ListRefusals(ctx, tc.q)
			if err != nil {
				t.Errorf("%s: %v", describeFilter(tc.q), err)
				continue
			}
			var hosts []string
			for _, r := range got {
				hosts = append(hosts, r.Host)
			}
			if !slices.Equal(hosts, tc.want) {
				t.Errorf("%s found %q, want %q", describeFilter(tc.q), hosts, tc.want)
			}
			n := 0
			if err := s.EachRefusal(ctx, tc.q, func(*Refusal) error { n++; return nil }); err != nil || n != len(tc.want) {
				t.Errorf("%s: the export went through %d rows (%v), want %d", describeFilter(tc.q), n, err, len(tc.want))
			}
			after, _, err := s.ListRefusalsAfter(ctx, tc.q, 0)
			if err != nil || len(after) != len(tc.want) {
				t.Errorf("%s: the newer page found %d rows (%v), want %d", describeFilter(tc.q), len(after), err, len(tc.want))
			}
		}
	})
}

// describeFilter names a query's column filters, bytes quoted.
func describeFilter(q RefusalQuery) string {
	return fmt.Sprintf("host %q (exact %v) agent %q tool %q reason %q code %q", q.Host, q.HostExact, q.Agent, q.Tool, q.Reason, q.Code)
}

// The URL's part of the search text is capped by itself: a page that
// pads its URL past the cap (it chooses the URL) no longer pushes the
// message and the trigger out of the search, and both engines find them.
// Capped as a whole, neither was found on SQLite, and the trigger on
// neither engine.
func TestALongURLLeavesTheMessageAndTriggerSearchable(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		long := "https://t.example/?q=" + strings.Repeat("a", 1100) + "&tail=zebra"
		rows := []Refusal{
			{URL: long, Redirects: StringList{"https://r.example/" + strings.Repeat("b", 2000)}, Message: "Quokka refused", Trigger: "Nightly-Sync"},
			{URL: "https://other.example/", Message: "Refused: other", Trigger: "manual"},
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		for search, want := range map[string]int{"quokka": 1, "nightly-sync": 1, "quokka nightly-sync t.example": 1, "other": 1, "zebra": 0} {
			got, _, err := s.ListRefusals(ctx, RefusalQuery{Search: search})
			if err != nil {
				t.Fatalf("search %q: %v", search, err)
			}
			if len(got) != want {
				t.Errorf("search %q found %d refusals, want %d", search, len(got), want)
			}
		}
	})
}
