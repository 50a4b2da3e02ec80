package models

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// seedHours inserts refusals spread over five hours, some hosts only in
// the oldest hours, and returns them.
func seedHours(t *testing.T, s *Store, base time.Time) []Refusal {
	t.Helper()
	var rows []Refusal
	for i := range 600 {
		at := base.Add(time.Duration(i) * 30 * time.Second) // 5 hours
		host := fmt.Sprintf("h%d.example", i%7)
		if i < 100 {
			host = fmt.Sprintf("old%d.example", i%3)
		}
		kind := KindPolicy
		if i%5 == 0 {
			kind = "network"
		}
		rows = append(rows, Refusal{Time: at, Host: host, Tool: "fetch_url", Agent: fmt.Sprintf("bot%d", i%2), Kind: kind})
	}
	if err := s.InsertRefusals(testCtx(t), rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// wantCounts compares the counters' answers with a count of the rows.
func wantCounts(t *testing.T, s *Store, since time.Time) {
	t.Helper()
	ctx := testCtx(t)
	var direct int64
	if err := s.r.Model(&Refusal{}).Where("time >= ?", since.UTC()).Count(&direct).Error; err != nil {
		t.Fatal(err)
	}
	got, err := s.CountRefusalsSince(ctx, since)
	if err != nil || got != direct {
		t.Fatalf("CountRefusalsSince(%s) = %d, %v; the rows say %d", since.Format(time.TimeOnly), got, err, direct)
	}
	var want []HostCount
	if err := s.r.Table("refusals").Select("host, COUNT(*) AS count").Where("time >= ?", since.UTC()).Group("host").Order("count DESC, host").Limit(5).Scan(&want).Error; err != nil {
		t.Fatal(err)
	}
	tops, err := s.TopRefusedHosts(ctx, since, 5)
	if err != nil || fmt.Sprint(tops) != fmt.Sprint(want) {
		t.Fatalf("TopRefusedHosts(%s) = %v, %v; the rows say %v", since.Format(time.TimeOnly), tops, err, want)
	}
}

// Finding 6: the log's "today" counters recounted the day on every view.
// They now come from counters kept with each insert, and agree with the
// rows for any starting time, on the hour or not.
func TestCountersAgreeWithTheRows(t *testing.T) { eachEngine(t, testCountersAgreeWithTheRows) }

func testCountersAgreeWithTheRows(t *testing.T) {
	s := openTestStore(t)
	base := time.Date(2026, 3, 4, 10, 20, 0, 0, time.UTC)
	seedHours(t, s, base)
	for _, since := range []time.Time{{}, base, base.Add(-time.Hour), base.Add(40 * time.Minute), base.Add(2 * time.Hour), base.Add(150*time.Minute + 7*time.Second), base.Add(10 * time.Hour)} {
		wantCounts(t, s, since)
	}
	// The counters are what answers: a view reads no refusal row for the
	// whole hours (a counter changed behind its back shows up).
	if err := s.w.Exec("UPDATE refusal_counts SET n = n + 1000 WHERE dim = 'total' AND period = ?", base.Add(time.Hour).Truncate(time.Hour)).Error; err != nil {
		t.Fatal(err)
	}
	var direct int64
	s.r.Model(&Refusal{}).Where("time >= ?", base).Count(&direct)
	if got, _ := s.CountRefusalsSince(testCtx(t), base.Truncate(time.Hour)); got < direct+1000 {
		t.Fatalf("CountRefusalsSince = %d: it did not read the counters", got)
	}
}

// An existing database gets its counters filled once, at open.
func TestCountersAreFilledForAnOlderDatabase(t *testing.T) {
	path := t.TempDir() + "/o.db"
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 3, 4, 10, 20, 0, 0, time.UTC)
	seedHours(t, s, base)
	if err := s.w.Exec("DELETE FROM refusal_counts").Error; err != nil {
		t.Fatal(err)
	}
	// A database from before the counters: migration 8 has not run.
	if err := s.w.Exec("DELETE FROM schema_migrations WHERE version >= 8").Error; err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wantCounts(t, s, time.Time{})
	wantCounts(t, s, base.Add(time.Hour))
}

// Finding 6: the purge left the refused-host list and the counters behind.
func TestPurgeKeepsCountersAndHostsInStep(t *testing.T) {
	eachEngine(t, testPurgeKeepsCountersAndHostsInStep)
}

func testPurgeKeepsCountersAndHostsInStep(t *testing.T) {
	s := openTestStore(t)
	base := time.Date(2026, 3, 4, 10, 20, 0, 0, time.UTC)
	seedHours(t, s, base)
	cutoff := base.Add(70*time.Minute + 15*time.Second) // mid-hour, after every old* host
	n, err := s.PurgeRefusalsBefore(testCtx(t), cutoff)
	if err != nil || n != 141 {
		t.Fatalf("purge = %d, %v; want 141 rows", n, err)
	}
	wantCounts(t, s, time.Time{})
	wantCounts(t, s, cutoff)
	hosts := s.refusedHostsForTest(t)
	if got := strings.Join(hosts, " "); strings.Contains(got, "old") || len(hosts) != 7 {
		t.Fatalf("refused hosts after the purge: %s; want the 7 still refused", got)
	}
	var stale int64
	s.r.Table("refusal_counts").Where("dim <> 'host' AND period < ?", cutoff.Truncate(time.Hour)).Count(&stale)
	if stale != 0 {
		t.Fatalf("%d counter rows of purged hours remain", stale)
	}
}

// A purge whose cutoff is on the hour (and on midnight) keeps the
// counters of the hour and day that start there: none of their rows went.
func TestPurgeOnTheHourKeepsTheNextPeriodsCounters(t *testing.T) {
	eachEngine(t, testPurgeOnTheHourKeepsTheNextPeriodsCounters)
}

func testPurgeOnTheHourKeepsTheNextPeriodsCounters(t *testing.T) {
	s := openTestStore(t)
	base := time.Date(2026, 3, 4, 22, 20, 0, 0, time.UTC) // the rows cross midnight
	seedHours(t, s, base)
	cutoff := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)
	if _, err := s.PurgeRefusalsBefore(testCtx(t), cutoff); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, s, time.Time{})
	wantCounts(t, s, cutoff)
}

// Finding 6: the file never shrank after a purge. A new database is
// created with incremental vacuum, and the purge gives free pages back.
func TestPurgeGivesSpaceBack(t *testing.T) {
	s := openTestStore(t)
	ctx := testCtx(t)
	rows := make([]Refusal, 5000)
	for i := range rows {
		rows[i] = Refusal{Time: time.Date(2020, 1, 1, 0, 0, i, 0, time.UTC), Host: "x.example", Message: strings.Repeat("m", 1500)}
	}
	if err := s.InsertRefusals(ctx, rows); err != nil {
		t.Fatal(err)
	}
	pages := func() int64 {
		var n int64
		if err := s.r.Raw("PRAGMA page_count").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := pages()
	if _, err := s.PurgeRefusalsBefore(ctx, time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	free, reclaimed, err := s.FreeSpace(ctx)
	if err != nil || !reclaimed || free != 0 {
		t.Fatalf("FreeSpace = %d, %v, %v; want nothing left free, incremental vacuum on", free, reclaimed, err)
	}
	if after := pages(); after > before/4 {
		t.Fatalf("the file has %d pages after purging everything, %d before", after, before)
	}
}

// Finding 6: "host=zzzz&from=2000-01-01" read every row since 2000 to
// find nothing. A host substring with other filters now becomes the
// refused hosts containing it, answered by the host index.
func TestHostSubstringWithOtherFiltersUsesTheHostIndex(t *testing.T) {
	s := openTestStore(t)
	base := time.Date(2026, 3, 4, 10, 20, 0, 0, time.UTC)
	seedHours(t, s, base)
	ctx := testCtx(t)
	since := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	rows, _, err := s.ListRefusals(ctx, RefusalQuery{Host: "zzzz", Since: since})
	if err != nil || len(rows) != 0 {
		t.Fatalf("no host matches: %d rows, %v", len(rows), err)
	}
	q, none, err := RefusalQuery{Host: "H1.EX", Since: since, Agent: "bot1"}.resolveHosts(s.r)
	if err != nil || none || fmt.Sprint(q.hostIn) != "[h1.example]" {
		t.Fatalf("resolveHosts = %v, %v, %v", q.hostIn, none, err)
	}
	stmt := s.r.Session(&gorm.Session{DryRun: true})
	idq, err := q.idQuery(stmt, 51, "")
	if err != nil {
		t.Fatal(err)
	}
	dry := idq.Find(&[]int64{}).Statement
	var plan []struct {
		Detail string
	}
	if err := s.r.Raw("EXPLAIN QUERY PLAN "+dry.SQL.String(), dry.Vars...).Scan(&plan).Error; err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(plan); strings.Contains(got, "SCAN refusals") && !strings.Contains(got, "idx_refusals_host") {
		t.Fatalf("plan %s scans the table", got)
	}
	rows, _, err = s.ListRefusals(ctx, RefusalQuery{Host: "h1.ex", Since: since, Agent: "bot1"})
	if err != nil || len(rows) == 0 {
		t.Fatalf("h1.ex for bot1: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if r.Host != "h1.example" || r.Agent != "bot1" {
			t.Fatalf("row %+v does not match the filter", r)
		}
	}
}

// A batch larger than any multi-row statement (500 rows) keeps every
// refused host and counter, and a second batch adds to them: on
// PostgreSQL both are one statement of arrays (refusal_counts_pg.go).
func TestABatchOfManyHostsKeepsEveryCounter(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		base := time.Date(2026, 3, 4, 10, 50, 0, 0, time.UTC)
		const hosts = 1234
		batch := func() []Refusal {
			rows := make([]Refusal, hosts)
			for i := range rows {
				// Two hours, so the totals keep two ID ranges.
				rows[i] = Refusal{Time: base.Add(time.Duration(i) * 2 * time.Second), Host: fmt.Sprintf("h%04d.example", i), Tool: "fetch_url", Kind: KindPolicy}
			}
			return rows
		}
		for round := 1; round <= 2; round++ {
			if err := s.InsertRefusals(ctx, batch()); err != nil {
				t.Fatal(err)
			}
			var listed int64
			if err := s.r.Table("refusal_hosts").Count(&listed).Error; err != nil || listed != hosts {
				t.Fatalf("round %d: %d refused hosts listed (%v), want %d", round, listed, err, hosts)
			}
			var perHost []int64
			if err := s.r.Table("refusal_counts").Where("dim = ?", dimHost).Distinct("n").Pluck("n", &perHost).Error; err != nil {
				t.Fatal(err)
			}
			if len(perHost) != 1 || perHost[0] != int64(round) {
				t.Fatalf("round %d: the host counters hold %v, want every one %d", round, perHost, round)
			}
			wantCounts(t, s, time.Time{})
			wantCounts(t, s, base.Add(10*time.Minute))
			// Each hour's total bounds exactly the IDs of its rows.
			var ranges []struct {
				Period       time.Time
				N, Low, High int64
			}
			if err := s.r.Raw("SELECT period, n, min_id AS low, max_id AS high FROM refusal_counts WHERE dim = ? ORDER BY period", dimTotal).Scan(&ranges).Error; err != nil {
				t.Fatal(err)
			}
			if len(ranges) != 2 {
				t.Fatalf("round %d: totals %+v, want two hours", round, ranges)
			}
			for _, r := range ranges {
				var want struct{ N, Low, High int64 }
				err := s.r.Raw("SELECT COUNT(*) AS n, MIN(id) AS low, MAX(id) AS high FROM refusals WHERE time >= ? AND time < ?", r.Period.UTC(), r.Period.UTC().Add(time.Hour)).Scan(&want).Error
				if err != nil {
					t.Fatal(err)
				}
				if r.N != want.N || r.Low != want.Low || r.High != want.High {
					t.Errorf("round %d: the total of %s is %d rows, IDs %d-%d; the rows say %d, %d-%d", round, r.Period.UTC().Format(time.TimeOnly), r.N, r.Low, r.High, want.N, want.Low, want.High)
				}
			}
		}
	})
}
