package models

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The benchmark database is expensive to build, so it is seeded once and
// cached under os.TempDir(). Bump benchSeedVersion when the seed changes.
const (
	benchRows  = 1_000_000
	benchHosts = 5000
	// v6: a v5 file seeded while the migrations were numbered otherwise
	// records migration 11 without its repeat_count column, and every
	// benchmark on it failed to open it (migration 13).
	benchSeedVersion = "refusals-v6" // tickets, search text, counters filled after the seed
)

var benchStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// benchStep spreads the rows over about 90 days.
const benchStep = 90 * 24 * time.Hour / benchRows

func BenchmarkListRefusals(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a 1,000,000-row database; skipped with -short")
	}
	s := openBenchStore(b)
	cases := refusalListCases(benchStart, benchStart.Add(benchRows*benchStep), benchRows)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			page := func() {
				if _, _, err := s.ListRefusals(ctx, c.q); err != nil {
					b.Fatal(err)
				}
			}
			cpu := processCPU()
			n := 0
			for b.Loop() {
				page()
				n++
			}
			// CPU time per page: the wall-clock p95 below includes waiting
			// for a core on a shared machine; this does not.
			b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
			reportP95(b, 200, page)
		})
	}
}

// refusalListCase is one filter of the log page, timed on a seeded log.
type refusalListCase struct {
	name string
	q    RefusalQuery
}

// refusalListCases are the log page's filters on a log of rows refusals
// seeded from start to end (the SQLite benchmark's and PostgreSQL's).
func refusalListCases(start, end time.Time, rows int64) []refusalListCase {
	return []refusalListCase{
		{"newest", RefusalQuery{}},
		{"deep-cursor", RefusalQuery{BeforeID: rows / 2}},
		{"code", RefusalQuery{Code: "not_allowlisted"}},
		{"code-deep", RefusalQuery{Code: "bad_scheme", BeforeID: rows / 10}},
		{"host-substring", RefusalQuery{Host: "svc-012"}}, // 10 of 5000 hosts
		{"host-substring-one", RefusalQuery{Host: "svc-01234"}},
		{"host-substring-none", RefusalQuery{Host: "no-such-host"}}, // worst case: scans every row
		{"host-exact", RefusalQuery{Host: "svc-01234.example.com", HostExact: true}},
		{"host-and-code", RefusalQuery{Host: "svc-00", Code: "blocked_address"}},
		{"agent", RefusalQuery{Agent: "agent-07"}},
		{"kind-network", RefusalQuery{Kind: "network"}}, // a quarter of the rows
		{"kind-and-code", RefusalQuery{Kind: "network", Code: "dns_failure"}},
		{"unreviewed", RefusalQuery{Unreviewed: true}},
		{"needs-access", RefusalQuery{Status: StatusNeedsAccess}},
		{"last-7-days", RefusalQuery{Since: end.Add(-7 * 24 * time.Hour)}},
		{"one-day-window", RefusalQuery{Since: start.Add(30 * 24 * time.Hour), Until: start.Add(31 * 24 * time.Hour)}},
		{"month-window", RefusalQuery{Since: start.Add(30 * 24 * time.Hour), Until: start.Add(60 * 24 * time.Hour)}},
		// Tickets and free-text search (issue 11): a ticket is indexed; a
		// search without one reads at most searchScanRows rows a page.
		{"ticket", RefusalQuery{Ticket: "SUP-12345"}},
		{"ticket-none", RefusalQuery{Ticket: "SUP-none"}},
		{"search-common", RefusalQuery{Search: "ticket"}},
		{"search-url-rare", RefusalQuery{Search: "svc-01234.example.com/ticket"}}, // 1 in 5000 rows
		{"search-none", RefusalQuery{Search: "no-such-text"}},                     // worst case: one full window
		{"search-two-words", RefusalQuery{Search: "Refused BAD_PORT"}},
		{"search-deep-cursor", RefusalQuery{Search: "no-such-text", BeforeID: rows / 2}},
		{"search-in-ticket", RefusalQuery{Ticket: "SUP-12345", Search: "refused"}},
	}
}

// reportP95 times runs calls of fn and reports the 95th percentile as
// "p95-ms": the page-time target is a p95, which ns/op (a mean) hides.
func reportP95(b *testing.B, runs int, fn func()) {
	b.Helper()
	d := make([]time.Duration, runs)
	for i := range d {
		start := time.Now()
		fn()
		d[i] = time.Since(start)
	}
	slices.Sort(d)
	p95 := d[(runs*95+99)/100-1]
	b.ReportMetric(float64(p95)/float64(time.Millisecond), "p95-ms")
}

// openBenchStore opens the cached benchmark database, seeding it first if it
// is missing or from an older seed version.
func openBenchStore(b *testing.B) *Store {
	b.Helper()
	path := filepath.Join(os.TempDir(), "outbound-models-bench-"+benchSeedVersion+".db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		start := time.Now()
		if err := seedBenchDB(path); err != nil {
			b.Fatalf("seeding %s: %v", path, err)
		}
		b.Logf("seeded %d refusals into %s in %v", benchRows, path, time.Since(start).Round(time.Millisecond))
	}
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	var n int64
	if err := s.r.Model(&Refusal{}).Count(&n).Error; err != nil || n != benchRows {
		b.Fatalf("cached benchmark database %s has %d rows (%v), want %d; delete it to reseed", path, n, err, benchRows)
	}
	return s
}

// seedBenchDB writes benchRows synthetic refusals with multi-row INSERTs in
// one transaction into a temporary file, then renames it into place, so an
// interrupted seed never leaves a half-filled cache behind.
func seedBenchDB(path string) error {
	tmp := path + ".seeding"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(tmp + suffix)
	}
	s, err := Open(tmp)
	if err != nil {
		return err
	}
	if err := seedRefusals(s, benchRows, benchStart, benchStep); err != nil {
		return errors.Join(err, s.Close())
	}
	if err := fillDerived(s); err != nil {
		return errors.Join(err, s.Close())
	}
	if err := s.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// fillDerived fills what the store keeps beside each refusal (its search
// text, the counters) for rows seeded straight into the table, as the
// migrations do for an older database: the migrations ran when the empty
// file was created, before the seed.
func fillDerived(s *Store) error {
	if err := backfillRefusalTexts(s.w); err != nil {
		return err
	}
	if err := s.w.Exec("DELETE FROM refusal_counts").Error; err != nil {
		return err
	}
	return backfillRefusalCounts(s.w)
}

// seedRefusals writes n synthetic refusals, one every step from start,
// with raw multi-row INSERTs in one transaction (no counters: the next
// Open fills them, as for a database from before them).
func seedRefusals(s *Store, n int, start time.Time, step time.Duration) error {
	codes := []string{"not_allowlisted", "blocked_address", "bad_port", "bad_scheme", "dns_failure", "redirect_blocked", "too_many_redirects", "invalid_url"}
	tools := []string{"fetch_url", "take_screenshot", "call_integration", "proxy", "check"}
	kinds := []string{"policy", "policy", "policy", "network"}
	statuses := []ReviewStatus{StatusUnreviewed, StatusUnreviewed, StatusUnreviewed, StatusUnreviewed, StatusUnreviewed,
		StatusUnreviewed, StatusUnreviewed, StatusExpected, StatusReviewed, StatusNeedsAccess}
	cols := []string{"time", "tool", "url", "host", "port", "addresses", "code", "reason", "message", "fix",
		"entry", "agent", "thread", "trigger_info", "redirects", "status", "comment", "reviewed_by", "kind", "remedy_kind", "remedy_value", "ticket"}
	const perStmt = 500
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	stmt := "INSERT INTO refusals (" + strings.Join(cols, ",") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+",", perStmt), ",")
	rng := rand.New(rand.NewPCG(1, 2))

	ctx := context.Background()
	sqlDB, err := s.w.DB()
	if err != nil {
		return err
	}
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	prep, err := tx.PrepareContext(ctx, stmt)
	if err != nil {
		return errors.Join(err, tx.Rollback())
	}
	args := make([]any, 0, perStmt*len(cols))
	for i := 0; i < n; i += perStmt {
		args = args[:0]
		for j := i; j < i+perStmt; j++ {
			host := fmt.Sprintf("svc-%05d.example.com", rng.IntN(benchHosts))
			code := codes[rng.IntN(len(codes))]
			args = append(args,
				start.Add(time.Duration(j)*step), tools[rng.IntN(len(tools))],
				"https://"+host+"/ticket/"+fmt.Sprint(j), host, 443, `["10.0.0.1"]`, code, "private",
				"refused: "+code, "ask an admin to allowlist "+host, "", fmt.Sprintf("agent-%02d", rng.IntN(40)),
				fmt.Sprint("thread-", j/7), "email", "", statuses[rng.IntN(len(statuses))], "", "",
				kinds[rng.IntN(len(kinds))], "add_entry", host, benchTicket(j))
		}
		if _, err := prep.ExecContext(ctx, args...); err != nil {
			return errors.Join(err, tx.Rollback())
		}
	}
	if err := errors.Join(prep.Close(), tx.Commit()); err != nil {
		return err
	}
	return nil
}

// benchTicket gives most rows a ticket, about 20 rows each, the way a
// help desk's agents name them; a tenth of the rows have none.
func benchTicket(row int) string {
	if row%10 == 9 {
		return ""
	}
	return fmt.Sprintf("SUP-%d", row/20)
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
