package models

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// wouldBenchSeedVersion names the cached would-be refusal database; bump
// it when the seed changes.
const wouldBenchSeedVersion = "would-refusals-v3" // the (agent, time) index, no (time, agent) one

// BenchmarkListWouldRefusals: a page of the log's would-refuse outcome at
// a million rows, for each filter, as BenchmarkListRefusals does for the
// refusals. The target is a p95 of 100 ms.
func BenchmarkListWouldRefusals(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds a 1,000,000-row database; skipped with -short")
	}
	s := openWouldBenchStore(b)
	end := benchStart.Add(benchRows * benchStep)
	cases := []struct {
		name string
		q    RefusalQuery
	}{
		{"newest", RefusalQuery{}},
		{"deep-cursor", RefusalQuery{BeforeID: benchRows / 2}},
		{"agent", RefusalQuery{Agent: "agent-07"}},
		{"tool", RefusalQuery{Tool: "take_screenshot"}},
		{"integration", RefusalQuery{Integration: "crm"}},
		{"integration-none", RefusalQuery{Integration: "no-such"}},
		{"ticket", RefusalQuery{Ticket: "SUP-12345"}},
		{"host-exact", RefusalQuery{Host: "svc-01234.example.com", HostExact: true}},
		{"host-substring", RefusalQuery{Host: "svc-012"}},
		{"host-substring-none", RefusalQuery{Host: "no-such-host"}}, // one full window
		{"last-7-days", RefusalQuery{Since: end.Add(-7 * 24 * time.Hour)}},
		{"one-day-window", RefusalQuery{Since: benchStart.Add(30 * 24 * time.Hour), Until: benchStart.Add(31 * 24 * time.Hour)}},
		{"since-long-ago", RefusalQuery{Since: benchStart.Add(-time.Hour)}},
		{"agent-and-day", RefusalQuery{Agent: "agent-07", Since: benchStart.Add(30 * 24 * time.Hour), Until: benchStart.Add(31 * 24 * time.Hour)}},
		{"search-common", RefusalQuery{Search: "ticket"}},
		{"search-none", RefusalQuery{Search: "no-such-text"}}, // one full window
		{"search-in-ticket", RefusalQuery{Ticket: "SUP-12345", Search: "allowlist"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			page := func() {
				if _, _, err := s.ListWouldRefusals(ctx, c.q); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				page()
			}
			reportP95(b, 100, page)
		})
	}
	b.Run("count-7-days", func(b *testing.B) {
		ctx := context.Background()
		count := func() {
			if _, err := s.CountWouldRefusals(ctx, end.Add(-7*24*time.Hour)); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			count()
		}
		reportP95(b, 50, count)
	})
}

// openWouldBenchStore opens the cached benchmark database of would-be
// refusals, seeding it first when missing.
func openWouldBenchStore(b *testing.B) *Store {
	b.Helper()
	path := filepath.Join(os.TempDir(), "outbound-models-bench-"+wouldBenchSeedVersion+".db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		tmp := path + ".seeding"
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(tmp + suffix)
		}
		s, err := Open(tmp)
		if err != nil {
			b.Fatal(err)
		}
		if err := errors.Join(seedWouldRefusals(s, benchRows), s.Close()); err != nil {
			b.Fatalf("seeding %s: %v", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
	}
	s, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// seedWouldRefusals writes n synthetic would-be refusals through the
// store's own insert, in batches of one transaction each.
func seedWouldRefusals(s *Store, n int) error {
	tools := []string{"fetch_url", "take_screenshot", "call_integration", "proxy", "browser_open"}
	integrations := []string{"crm", "billing", "orders"}
	rng := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	const batch = 5000
	rows := make([]WouldRefusal, 0, batch)
	for i := 0; i < n; i += batch {
		rows = rows[:0]
		for j := i; j < i+batch; j++ {
			host := fmt.Sprintf("svc-%05d.example.com", rng.IntN(benchHosts))
			r := WouldRefusal{Time: benchStart.Add(time.Duration(j) * benchStep), Tool: tools[rng.IntN(len(tools))], Agent: fmt.Sprintf("agent-%02d", rng.IntN(40)),
				Thread: fmt.Sprint("thread-", j/7), Ticket: benchTicket(j), URL: "https://" + host + "/ticket/" + fmt.Sprint(j), Host: host, Port: 443,
				Code: "forbidden", Reason: "not_allowlisted", Message: host + " is not on the outbound allowlist."}
			if r.Tool == "call_integration" {
				r.Integration = integrations[rng.IntN(len(integrations))]
			}
			rows = append(rows, r)
		}
		if err := s.InsertWouldRefusals(ctx, rows); err != nil {
			return err
		}
	}
	var got int64
	if err := s.r.Model(&WouldRefusal{}).Count(&got).Error; err != nil || got != int64(n) {
		return errors.Join(err, errors.New("seeded "+strings.TrimSpace(fmt.Sprint(got))+" rows"))
	}
	return nil
}
