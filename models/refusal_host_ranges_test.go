package models

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// Each day's host counter bounds the IDs of that host's rows of that day
// exactly: kept by the writer with each batch (rows written late
// included: an old day, the newest IDs), and filled again by migration 21
// for a database whose host counters had no ranges.
func TestHostCountersBoundTheirRows(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		target := testTarget(t)
		s, err := Open(target)
		if err != nil {
			t.Fatal(err)
		}
		ctx := testCtx(t)
		var rows []Refusal
		for i := range 900 {
			rows = append(rows, Refusal{Host: fmt.Sprintf("h%d.example", i%7), Kind: []string{"policy", "network"}[i%2], Time: t0.Add(time.Duration(i) * 5 * time.Minute)})
		}
		for i := range 60 { // written late: the first day's times
			rows = append(rows, Refusal{Host: fmt.Sprintf("h%d.example", i%9), Kind: "policy", Time: t0.Add(time.Duration(i) * time.Minute)})
		}
		for i := range rows {
			rows[i].Tool, rows[i].Code, rows[i].Reason = "fetch_url", "forbidden", "not_allowlisted"
		}
		for i := 0; i < len(rows); i += 100 {
			if err := s.InsertRefusals(ctx, rows[i:min(i+100, len(rows))]); err != nil {
				t.Fatal(err)
			}
		}
		type key struct {
			day        time.Time
			host, kind string
		}
		want := map[key][2]int64{}
		for i, r := range rows {
			k, id := key{utcDay(r.Time), r.Host, r.Kind}, int64(i+1)
			b, ok := want[k]
			if !ok {
				b = [2]int64{id, id}
			}
			want[k] = [2]int64{min(b[0], id), max(b[1], id)}
		}
		check := func(when string) {
			t.Helper()
			var got []struct {
				Period       time.Time
				Value, Kind  string
				MinID, MaxID int64
			}
			if err := s.r.Raw("SELECT period, value, kind, min_id, max_id FROM refusal_counts WHERE dim = 'host'").Scan(&got).Error; err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Errorf("%s: %d host counters, want %d", when, len(got), len(want))
			}
			for _, c := range got {
				if w := want[key{c.Period.UTC(), c.Value, c.Kind}]; w != [2]int64{c.MinID, c.MaxID} {
					t.Errorf("%s: %s %s %s bounds IDs %d-%d, want %d-%d", when, c.Period.UTC().Format(time.DateOnly), c.Value, c.Kind, c.MinID, c.MaxID, w[0], w[1])
				}
			}
		}
		check("written")
		// A database from before migration 21: the host counters had no
		// ranges (0, unknown), and hosts from before the lower-casing
		// release kept their case, in the log, the host list and the
		// counters.
		for _, stmt := range []string{
			"UPDATE refusal_counts SET min_id = 0, max_id = 0 WHERE dim = 'host'",
			"UPDATE refusals SET host = UPPER(host) WHERE id % 3 = 0 AND id < 400",
			"INSERT INTO refusal_hosts (host) SELECT DISTINCT host FROM refusals WHERE host <> LOWER(host)",
			"UPDATE refusal_counts SET value = UPPER(value) WHERE dim = 'host' AND value = 'h2.example'",
			"DELETE FROM schema_migrations WHERE version >= 21",
		} {
			if err := s.w.Exec(stmt).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s, err = Open(target); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check("migrated")
		var mixed int64
		if err := s.r.Raw("SELECT (SELECT COUNT(*) FROM refusals WHERE host <> LOWER(host)) + (SELECT COUNT(*) FROM refusal_hosts WHERE host <> LOWER(host))").Scan(&mixed).Error; err != nil {
			t.Fatal(err)
		}
		var hosts []string
		if err := s.r.Raw("SELECT host FROM refusal_hosts ORDER BY host").Scan(&hosts).Error; err != nil {
			t.Fatal(err)
		}
		if want := []string{"h0.example", "h1.example", "h2.example", "h3.example", "h4.example", "h5.example", "h6.example", "h7.example", "h8.example"}; mixed != 0 || !slices.Equal(hosts, want) {
			t.Errorf("after migration 21: %d hosts not lower-case; the host list is %v, want %v", mixed, hosts, want)
		}
	})
}
