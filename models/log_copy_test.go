package models

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// poisonTable makes every later insert into table of a row whose column
// col holds "poison" fail, as a constraint the batch breaks half-way
// would: on PostgreSQL a CHECK constraint (it fails the COPY in the middle
// of its stream), on SQLite a trigger. cure lifts it.
func poisonTable(t *testing.T, s *Store, table, col string) (cure func()) {
	t.Helper()
	add := fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT poison CHECK (%s NOT LIKE '%%poison%%') NOT VALID", table, col)
	drop := fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT poison", table)
	if s.engine == engineSQLite {
		add = fmt.Sprintf("CREATE TRIGGER poison BEFORE INSERT ON %s WHEN NEW.%s LIKE '%%poison%%' BEGIN SELECT RAISE(ABORT, 'poison'); END", table, col)
		drop = "DROP TRIGGER poison"
	}
	if err := s.w.Exec(add).Error; err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := s.w.Exec(drop).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// logTotals is what a refusal batch adds to: rows, search texts, refused
// hosts and the counters.
type logTotals struct{ rows, texts, hosts, counted int64 }

func readLogTotals(t *testing.T, s *Store) logTotals {
	t.Helper()
	var c logTotals
	for _, q := range []struct {
		sql string
		to  *int64
	}{
		{"SELECT COUNT(*) FROM refusals", &c.rows},
		{"SELECT COUNT(*) FROM refusal_texts", &c.texts},
		{"SELECT COUNT(*) FROM refusal_hosts", &c.hosts},
		{"SELECT COALESCE(SUM(n), 0) FROM refusal_counts WHERE dim = 'total'", &c.counted},
	} {
		if err := s.r.Raw(q.sql).Scan(q.to).Error; err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// A batch whose insert fails in the middle (the refusals' COPY at row
// 300, or the search text's after the refusals went in) leaves nothing:
// no rows, no search text, no new host and no count. The writer keeps
// the batch, and once the cause is gone it writes every row exactly once,
// in order, with its counters.
func TestAFailingBatchLeavesNothingAndIsRetriedWhole(t *testing.T) {
	for _, poisoned := range []struct{ table, col string }{{"refusals", "url"}, {"refusal_texts", "text"}} {
		t.Run(poisoned.table, func(t *testing.T) {
			eachEngine(t, func(t *testing.T) {
				s := openTestStore(t)
				ctx := testCtx(t)
				at := time.Now().UTC()
				row := func(i int, poison ...int) Refusal {
					url := fmt.Sprintf("https://h%d.example/%d", i, i)
					if slices.Contains(poison, i) {
						url += "/poison"
					}
					return Refusal{Time: at, Host: fmt.Sprintf("h%d", i), URL: url, Code: "forbidden", Agent: "bot", Tool: "proxy"}
				}
				if err := s.InsertRefusals(ctx, []Refusal{{Time: at, Host: "before"}}); err != nil {
					t.Fatal(err)
				}
				before := readLogTotals(t, s)
				cure := poisonTable(t, s, poisoned.table, poisoned.col)

				batch := make([]Refusal, 500)
				for i := range batch {
					batch[i] = row(i, 300) // half-way through the COPY
				}
				if err := s.InsertRefusals(ctx, batch); err == nil {
					t.Fatal("a batch with a poisoned row was stored")
				}
				if got := readLogTotals(t, s); got != before {
					t.Fatalf("after the failed batch: %+v, want it unchanged from %+v", got, before)
				}

				var failures atomic.Int64
				w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 5 * time.Millisecond, FlushBatch: 500,
					OnError: func(error) { failures.Add(1) }})
				// The writer's batches are cut by timing; with the first row
				// poisoned too, every batch it tries first fails.
				for i := range 700 {
					w.Write(row(i, 0, 300))
				}
				deadline := time.Now().Add(10 * time.Second)
				for failures.Load() < 2 {
					if time.Now().After(deadline) {
						t.Fatalf("the poisoned batch failed %d times in 10 s, want it retried", failures.Load())
					}
					time.Sleep(5 * time.Millisecond)
				}
				if got := readLogTotals(t, s); got != before {
					t.Fatalf("while the batch fails: %+v, want it unchanged from %+v", got, before)
				}
				cure()
				closeWriter(t, w)
				want := logTotals{rows: before.rows + 700, texts: before.texts + 700, hosts: before.hosts + 700, counted: before.counted + 700}
				if got := readLogTotals(t, s); got != want {
					t.Fatalf("after the retry: %+v, want %+v", got, want)
				}
				var urls []string
				if err := s.r.Raw("SELECT url FROM refusals WHERE host <> 'before' ORDER BY id").Scan(&urls).Error; err != nil {
					t.Fatal(err)
				}
				for i, u := range urls {
					if want := row(i, 0, 300).URL; u != want {
						t.Fatalf("row %d is %s, want %s: written out of order or twice", i, u, want)
					}
				}
			})
		})
	}
}
