package models

import (
	"fmt"
	"time"
)

// On PostgreSQL a batch's refused hosts and counters are each one
// statement whose values are arrays, unnested into rows. The multi-row
// statements SQLite uses (multirow.go) were cut into chunks of 500, 50, 5
// and 1 rows: a batch of 1,300 refusals over 1,100 hosts took about ten
// statements, each a round trip, and each planned anew with its
// thousands of parameters (plan_cache_mode=force_custom_plan,
// store_postgres.go). Timed inside the log writer at 10,000 refusals a
// second, the hosts took 11.7 ms and the counters 23 ms of each batch's
// 127 ms. An array is one parameter a column, whatever the batch.

const (
	pgHostInsert = "INSERT INTO refusal_hosts (host) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING"

	pgCountUpsert = "INSERT INTO refusal_counts (period, dim, value, kind, n) " +
		"SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::bigint[])"

	pgTotalUpsert = "INSERT INTO refusal_counts (period, dim, value, kind, n, min_id, max_id) " +
		"SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[])"
)

// pgRecordHosts is recordHosts on PostgreSQL: hosts, each once.
func pgRecordHosts(tx sqlTx, hosts []string) error {
	if len(hosts) == 0 {
		return nil
	}
	return tx.exec(pgHostInsert, hosts)
}

// counterArrays are counters as columns, for pgAddCounts.
type counterArrays struct {
	periods             []time.Time
	dims, values, kinds []string
	ns, minIDs, maxIDs  []int64
}

func (a *counterArrays) add(k countKey, c count, ids bool) {
	a.periods = append(a.periods, k.period)
	a.dims, a.values, a.kinds = append(a.dims, k.dim), append(a.values, k.value), append(a.kinds, k.kind)
	a.ns = append(a.ns, c.n)
	if ids {
		a.minIDs, a.maxIDs = append(a.minIDs, c.minID), append(a.maxIDs, c.maxID)
	}
}

// pgAddCounts is addCounts on PostgreSQL, keys in their fixed order: the
// totals and hosts (with their ID ranges) in one statement, the rest in another,
// each with the conflict clause of its multi-row twin.
func pgAddCounts(tx sqlTx, keys []countKey, counts map[countKey]count) error {
	var ranged, others counterArrays
	for _, k := range keys {
		if rangedDim(k.dim) {
			ranged.add(k, counts[k], true)
		} else {
			others.add(k, counts[k], false)
		}
	}
	if len(ranged.ns) > 0 {
		err := tx.exec(pgTotalUpsert+totalUpsert.tail, ranged.periods, ranged.dims, ranged.values, ranged.kinds, ranged.ns, ranged.minIDs, ranged.maxIDs)
		if err != nil {
			return fmt.Errorf("updating the refusal counters: %w", err)
		}
	}
	if len(others.ns) > 0 {
		if err := tx.exec(pgCountUpsert+countUpsert.tail, others.periods, others.dims, others.values, others.kinds, others.ns); err != nil {
			return fmt.Errorf("updating the refusal counters: %w", err)
		}
	}
	return nil
}
