package models

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm/logger"
)

// A Newer page holds exactly the matching rows just above its cursor, for
// every kind of filter the Older direction reads its own way: a time
// window (an ID range from the counters on PostgreSQL), a host substring
// of few hosts (one walk per host), a (column, id) index, a ticket, and
// their mixes. The older walk of the same filter is the reference.
func TestNewerPagesMatchTheOlderWalk(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		const total = 600
		rows := make([]Refusal, total)
		for i := range rows {
			r := Refusal{Tool: "fetch_url", Host: fmt.Sprintf("svc-%d.example", i%7), Code: []string{"forbidden", "bad_port", "invalid"}[i%3],
				Reason: "not_allowlisted", Kind: "policy", Agent: fmt.Sprintf("agent-%d", i%5), Time: t0.Add(time.Duration(i) * time.Minute)}
			if i%11 == 0 {
				r.Ticket = "SUP-" + strconv.Itoa(i/200)
			}
			rows[i] = r
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		for _, q := range []RefusalQuery{
			{},
			{Code: "bad_port"},
			{Code: "bad_port", Agent: "agent-2"},
			{Host: "svc-3.example", HostExact: true},
			{Host: "svc-3"},
			{Host: "SVC-1", Code: "invalid"},
			{Host: "example"},
			{Ticket: "SUP-1"},
			{Since: t0.Add(100 * time.Minute), Until: t0.Add(300 * time.Minute)},
			{Since: t0.Add(250 * time.Minute), Code: "forbidden"},
			{Until: t0.Add(90 * time.Minute), Host: "svc-2"},
		} {
			t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
				var all []int64 // newest first
				if err := s.EachRefusal(ctx, q, func(r *Refusal) error { all = append(all, r.ID); return nil }); err != nil {
					t.Fatal(err)
				}
				if len(all) == 0 {
					t.Fatal("the filter matches no row; the test shows nothing")
				}
				for _, after := range []int64{0, 1, 57, 250, 299, 451, 599, 600} {
					q := q
					q.Limit = 7
					got, newer, err := s.ListRefusalsAfter(ctx, q, after)
					if err != nil {
						t.Fatal(err)
					}
					// The matching IDs above after, oldest first: the
					// page is the first 7 of them, shown newest first.
					var above []int64
					for _, id := range slices.Backward(all) {
						if id > after {
							above = append(above, id)
						}
					}
					want := above[:min(7, len(above))]
					slices.Reverse(want)
					ids := make([]int64, len(got))
					for i, r := range got {
						ids[i] = r.ID
					}
					if !slices.Equal(ids, want) || newer != (len(above) > 7) {
						t.Errorf("after %d: got %v newer=%v, want %v newer=%v", after, ids, newer, want, len(above) > 7)
					}
				}
			})
		}
	})
}

// On PostgreSQL a Newer page reads the index of its filter forwards, as
// an Older page reads it backwards. Walking up the primary key from the
// cursor instead (the planner's choice, which assumes matching rows are
// spread evenly over the IDs) read every row between the cursor and the
// filter's rows: a ticket of a flooded day from a cursor in the weeks
// before took 1.8 s at ten million rows. Here the ticket's rows all lie
// above 20,000 others, and the page's ID step must not read those.
func TestNewerPageReadsTheFiltersIndex(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		const before, late = 20_000, 2_000
		batch := make([]Refusal, 0, 2000)
		for i := range before + late {
			r := Refusal{Tool: "fetch_url", Host: "h.example", Code: "forbidden", Reason: "not_allowlisted", Kind: "policy",
				Time: t0.Add(time.Duration(i) * time.Second)}
			if i >= before {
				r.Ticket, r.Agent, r.Time = "SUP-LATE", "agent-late", t0.Add(48*time.Hour+time.Duration(i)*time.Second)
			}
			if batch = append(batch, r); len(batch) == cap(batch) {
				if err := s.InsertRefusals(ctx, batch); err != nil {
					t.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		if err := s.w.Exec("ANALYZE refusals").Error; err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			q    RefusalQuery
		}{
			{"ticket", RefusalQuery{Ticket: "SUP-LATE"}},
			{"agent", RefusalQuery{Agent: "agent-late"}},
			{"since", RefusalQuery{Since: t0.Add(47 * time.Hour)}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := &sqlRecorder{}
				s.r.Logger = rec
				got, newer, err := s.ListRefusalsAfter(ctx, tc.q, 1)
				s.r.Logger = logger.Discard
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != DefaultRefusalPage || !newer || got[len(got)-1].ID != before+1 {
					t.Fatalf("got %d rows (oldest %d), newer=%v; want the %d just above row %d, and more", len(got), lastID(got), newer, DefaultRefusalPage, before)
				}
				step := rec.idStep(t)
				if read, plan := rowsDropped(t, s, step); read > 1000 {
					t.Errorf("the ID step read and dropped %d rows below the filter's:\n%s\n%s", read, step, plan)
				}
			})
		}
	})
}

var rowsRemoved = regexp.MustCompile(`Rows Removed by Filter: (\d+)`)

// rowsDropped runs stmt under EXPLAIN ANALYZE on PostgreSQL and returns
// how many rows its plan read and dropped by a filter, with the plan.
func rowsDropped(t *testing.T, s *Store, stmt string) (int, string) {
	t.Helper()
	var lines []string
	if err := s.r.Raw("EXPLAIN (ANALYZE, COSTS OFF) " + stmt).Scan(&lines).Error; err != nil {
		t.Fatalf("EXPLAIN %s: %v", stmt, err)
	}
	plan := strings.Join(lines, "\n")
	read := 0
	for _, m := range rowsRemoved.FindAllStringSubmatch(plan, -1) {
		n, _ := strconv.Atoi(m[1])
		read += n
	}
	return read, plan
}

func lastID(rows []Refusal) int64 {
	if len(rows) == 0 {
		return 0
	}
	return rows[len(rows)-1].ID
}

// sqlRecorder is a GORM logger that keeps every statement run, with its
// values written in.
type sqlRecorder struct {
	mu    sync.Mutex
	stmts []string
}

func (r *sqlRecorder) LogMode(logger.LogLevel) logger.Interface { return r }
func (r *sqlRecorder) Info(context.Context, string, ...any)     {}
func (r *sqlRecorder) Warn(context.Context, string, ...any)     {}
func (r *sqlRecorder) Error(context.Context, string, ...any)    {}
func (r *sqlRecorder) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	sql, _ := fc()
	r.mu.Lock()
	r.stmts = append(r.stmts, sql)
	r.mu.Unlock()
}

// all returns the recorded statements.
func (r *sqlRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.stmts)
}

// idStep is the one recorded statement that picks a page's IDs.
func (r *sqlRecorder) idStep(t *testing.T) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var steps []string
	for _, s := range r.stmts {
		if strings.HasPrefix(s, `SELECT "id" FROM "refusals"`) || strings.HasPrefix(s, "SELECT x.id FROM") {
			steps = append(steps, s)
		}
	}
	if len(steps) != 1 {
		t.Fatalf("want one ID step among the statements, found %d:\n%s", len(steps), strings.Join(r.stmts, "\n"))
	}
	return steps[0]
}

// A host substring that more than maxHostMatches refused hosts contain
// pages exactly like any filter, in both directions; on PostgreSQL it is
// found host by host (refusal_host_probe_pg.go), not by walking the log
// through the rows of other hosts between the cursor and its own: here
// 20,000 rows of other hosts lie below its rows and 20,000 above.
func TestManyHostSubstringPagesHostByHost(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		const others, hosts = 20_000, maxHostMatches + 200
		var rows []Refusal
		add := func(host string) {
			rows = append(rows, Refusal{Tool: "fetch_url", Host: host, Code: "forbidden", Reason: "not_allowlisted", Kind: "policy", Time: t0.Add(time.Duration(len(rows)) * time.Second)})
			if len(rows) == 2000 {
				if err := s.InsertRefusals(ctx, rows); err != nil {
					t.Fatal(err)
				}
				rows = rows[:0]
			}
		}
		var want []int64 // the matching IDs, oldest first
		id := int64(0)
		for i := range others {
			add(fmt.Sprintf("old-%d.example.org", i%50))
			id++
		}
		for i := range 3 * hosts {
			add(fmt.Sprintf("svc-%d.example.com", i%hosts))
			id++
			want = append(want, id)
		}
		for i := range others {
			add(fmt.Sprintf("flood-%d.attacker.example", i%50))
		}
		if len(rows) > 0 {
			if err := s.InsertRefusals(ctx, rows); err != nil {
				t.Fatal(err)
			}
		}
		if testOnPostgres(t) {
			if err := s.w.Exec("ANALYZE refusals").Error; err != nil {
				t.Fatal(err)
			}
		}
		q := RefusalQuery{Host: "Example.COM"}
		rec := &sqlRecorder{}
		s.r.Logger = rec
		var older []int64
		err := s.EachRefusal(ctx, q, func(r *Refusal) error { older = append(older, r.ID); return nil })
		first, _, err2 := s.ListRefusals(ctx, q)
		newerPage, newer, err3 := s.ListRefusalsAfter(ctx, RefusalQuery{Host: "example.com", Limit: 7}, 1)
		s.r.Logger = logger.Discard
		if err = errors.Join(err, err2, err3); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(older, reversed(want)) {
			t.Errorf("the older walk found %d rows (%v…), want %d (%v…)", len(older), older[:min(5, len(older))], len(want), want[len(want)-5:])
		}
		if len(first) != DefaultRefusalPage || first[0].ID != want[len(want)-1] {
			t.Errorf("the first page has %d rows from %d, want %d from %d", len(first), lastID(first[:1]), DefaultRefusalPage, want[len(want)-1])
		}
		var ids []int64
		for _, r := range newerPage {
			ids = append(ids, r.ID)
		}
		if w := want[:7]; !slices.Equal(ids, reversed(w)) || !newer {
			t.Errorf("the Newer page above row 1 is %v newer=%v, want %v newer=true", ids, newer, reversed(w))
		}
		for _, tc := range []struct {
			name  string
			after int64
		}{{"just below", want[40]}, {"at the top", want[len(want)-3]}} {
			got, newer, err := s.ListRefusalsAfter(ctx, RefusalQuery{Host: "example.com", Limit: 7}, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.Index(want, tc.after) + 1
			w := want[i:min(i+7, len(want))]
			ids = ids[:0]
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, reversed(w)) || newer != (i+7 < len(want)) {
				t.Errorf("%s: after %d got %v newer=%v, want %v newer=%v", tc.name, tc.after, ids, newer, reversed(w), i+7 < len(want))
			}
		}
		if !testOnPostgres(t) {
			return
		}
		// Each page read at most its first window of other hosts' rows.
		for _, stmt := range rec.all() {
			if !strings.Contains(stmt, `FROM "refusals"`) && !strings.Contains(stmt, "LATERAL") {
				continue
			}
			if read, plan := rowsDropped(t, s, stmt); read > recentScan {
				t.Errorf("a statement read and dropped %d rows of other hosts:\n%.300s\n%s", read, stmt, plan)
			}
		}
	})
}

// reversed returns a reversed copy of ids.
func reversed(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// A host substring of more than maxHostMatches hosts whose rows lie
// scattered among others, with one dense cluster: every Older walk, Older
// page and Newer page, for four page sizes and cursors around the first
// window's edges, holds exactly the matching rows (found here by brute
// force), with the right cursor and newer flag, on both engines.
func TestManyHostPagesMatchBruteForce(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rng := rand.New(rand.NewPCG(1, 2))
		const total = 14000
		var all []Refusal
		var match []int64 // oldest first
		for i := range total {
			var host string
			id := int64(i + 1)
			switch {
			case i >= 6000 && i < 7000: // a dense cluster
				host = fmt.Sprintf("m%d.hit.example", rng.IntN(650))
			case rng.IntN(40) == 0:
				host = fmt.Sprintf("m%d.hit.example", rng.IntN(650))
			default:
				host = fmt.Sprintf("o%d.other.example", rng.IntN(30))
			}
			if host[0] == 'm' {
				match = append(match, id)
			}
			all = append(all, Refusal{Tool: "fetch_url", Host: host, Code: "forbidden", Reason: "not_allowlisted", Kind: "policy", Time: t0.Add(time.Duration(i) * time.Second)})
		}
		for i := 0; i < len(all); i += 2000 {
			if err := s.InsertRefusals(ctx, all[i:min(i+2000, len(all))]); err != nil {
				t.Fatal(err)
			}
		}
		var hostsN int64
		s.r.Raw("SELECT COUNT(*) FROM refusal_hosts WHERE host LIKE '%hit%'").Scan(&hostsN)
		if hostsN <= maxHostMatches {
			t.Fatalf("only %d matching hosts", hostsN)
		}
		q := RefusalQuery{Host: "HIT.example"}
		for _, lim := range []int{1, 7, 50, 500} {
			q := q
			q.Limit = lim
			var older []int64
			if err := s.EachRefusal(ctx, q, func(r *Refusal) error { older = append(older, r.ID); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(older, reversed(match)) {
				t.Errorf("limit %d: the older walk differs: %d rows vs %d", lim, len(older), len(match))
			}
			// pages of ListRefusals with limit from various cursors
			for _, before := range []int64{0, 1, 2, 5000, 5001, 6000, 6500, 7001, 9000, 9001, 13999, 14000, 14001, 20000} {
				q := q
				q.BeforeID = before
				got, next, err := s.ListRefusals(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				var want []int64
				for _, id := range slices.Backward(match) {
					if before == 0 || id < before {
						want = append(want, id)
					}
				}
				wnext := int64(0)
				if len(want) > lim {
					want = want[:lim]
					wnext = want[lim-1]
				}
				ids := idsOf(got)
				if !slices.Equal(ids, want) || next != wnext {
					t.Errorf("limit %d before %d: got %v next %d, want %v next %d", lim, before, head(ids), next, head(want), wnext)
				}
			}
			for _, after := range []int64{0, 1, 2, 4999, 5000, 5001, 5999, 6000, 6500, 7000, 7001, 9000, 10001, 13990, 13999, 14000, 14001} {
				got, newer, err := s.ListRefusalsAfter(ctx, q, after)
				if err != nil {
					t.Fatal(err)
				}
				var above []int64
				for _, id := range match {
					if id > after {
						above = append(above, id)
					}
				}
				want := reversed(above[:min(lim, len(above))])
				ids := idsOf(got)
				if !slices.Equal(ids, want) || newer != (len(above) > lim) {
					t.Errorf("limit %d after %d: got %v newer=%v, want %v newer=%v", lim, after, head(ids), newer, head(want), len(above) > lim)
				}
			}
		}
	})
}

// The newer flag of a windowed search bounded by a time filter: a Newer
// page that reached the end of the time range has no newer rows.
func TestNewerSearchPageEndsWithItsTimeRange(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		oldS, oldP := searchScanRows, pgScanRows
		searchScanRows, pgScanRows = 100, 100
		t.Cleanup(func() { searchScanRows, pgScanRows = oldS, oldP })
		var rows []Refusal
		for i := range 600 {
			rows = append(rows, Refusal{Tool: "fetch_url", Host: "a.example", URL: "https://a.example/needle", Code: "forbidden", Reason: "not_allowlisted", Kind: "policy", Message: "needle", Time: t0.Add(time.Duration(i) * time.Hour)})
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		// rows 1..600, one an hour; the time range holds rows 101..300.
		q := RefusalQuery{Search: "needle", Since: t0.Add(100 * time.Hour), Until: t0.Add(300 * time.Hour), Limit: 50}
		got, newer, err := s.ListRefusalsAfter(ctx, q, 260)
		if err != nil {
			t.Fatal(err)
		}
		ids := idsOf(got)
		if len(ids) != 40 || newer {
			t.Errorf("after 260: got %d rows newer=%v; want rows 261..300 and newer=false (the time range ends at 300)", len(ids), newer)
		}
		got, newer, err = s.ListRefusalsAfter(ctx, q, 300)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 0 || newer {
			t.Errorf("after 300 (the range's last row): %d rows newer=%v; want none and newer=false", len(got), newer)
		}
	})
}

// idsOf is the IDs of rows, in their order.
func idsOf(rows []Refusal) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// head shortens ids for a message: its first and last three.
func head(ids []int64) []int64 {
	if len(ids) > 6 {
		return append(slices.Clone(ids[:3]), ids[len(ids)-3:]...)
	}
	return ids
}
