package models

import (
	"fmt"
	"testing"
	"time"
)

// A host substring that matches few hosts, all of them older than the
// newest recentScan rows, is read per host (on PostgreSQL, through the
// (host, id) index and a lateral join): the pages must still be every
// matching row exactly once, newest first, alone and with another filter.
func TestFewHostsBelowTheRecentWindowPageExactly(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		const rare, total = 130, recentScan + 1000
		rows := make([]Refusal, total)
		for i := range rows {
			host, code := "common.example", "a"
			if i < rare {
				host = fmt.Sprintf(`rare-%d.example`, i%3)
				code = []string{"a", "b"}[i%2]
			}
			rows[i] = Refusal{Host: host, Code: code, Time: t0.Add(time.Duration(i) * time.Second)}
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name  string
			q     RefusalQuery
			match func(i int) bool
		}{
			{"substring alone", RefusalQuery{Host: "RARE-"}, func(i int) bool { return i < rare }},
			{"substring and code", RefusalQuery{Host: "rare-", Code: "b", Limit: 20}, func(i int) bool { return i < rare && i%2 == 1 }},
			{"substring and a window", RefusalQuery{Host: "rare-2", Since: t0.Add(10 * time.Second), Until: t0.Add(100 * time.Second)},
				func(i int) bool { return i%3 == 2 && i >= 10 && i < 100 }},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got := pagedIDs(t, s, tt.q)
				var want []int64
				for i := total - 1; i >= 0; i-- {
					if tt.match(i) {
						want = append(want, int64(i+1))
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("pages hold IDs %v,\nwant %v", got, want)
				}
			})
		}
	})
}

// The text[] parameter quotes every element, so a host holding a quote,
// a backslash or a comma stays one element.
func TestTextArrayQuotesEachElement(t *testing.T) {
	v, err := textArray{`a.example`, `b"c`, `d\e`, `f,g`}.Value()
	if err != nil || v != `{"a.example","b\"c","d\\e","f,g"}` {
		t.Fatalf("Value = %v, %v", v, err)
	}
}
