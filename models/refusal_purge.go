package models

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// purgeUnlocked, when set (tests only), is called wherever the purge
// holds no write lock, so a test can run another purge or an insert
// there, as another replica or the log writer may.
var purgeUnlocked func()

func atPurgeUnlocked() {
	if f := purgeUnlocked; f != nil {
		f()
	}
}

// purgeChunk is how many rows one purge transaction deletes. Each chunk is
// its own short transaction, so the refusal writer and admins saving the
// allowlist get the write lock in between instead of waiting for a purge of
// months of history.
const purgeChunk = 2000

// PurgeRefusalsBefore deletes refusals whose Time is before t, oldest
// first, in chunks of purgeChunk rows, then the refused hosts no refusal
// names any more, and, on SQLite, gives the freed pages back to the file
// system. Each chunk takes its rows from the counters in the transaction
// that deletes them, under the write lock, so every counter a page reads
// equals the rows at every commit, whatever another purge (a replica) or
// the log writer does in between (purgedCounts says which counters wait
// for the walk to leave their day). It stops early when ctx ends and reports how many rows
// it deleted so far in either case; the next purge, of this process or
// any other, finishes the sweep a stopped one left undone (sweepOwed).
func (s *Store) PurgeRefusalsBefore(ctx context.Context, t time.Time) (int64, error) {
	var total int64
	cutoff := t.UTC()
	fail := func(err error) (int64, error) {
		return total, fmt.Errorf("models: purging refusals before %s stopped after %d rows: %w", cutoff.Format(time.RFC3339), total, err)
	}
	var from time.Time // where the next chunk starts: see purgeChunk
	for {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		began := time.Now()
		n, last, err := s.purgeChunk(ctx, from, cutoff)
		if err != nil {
			return fail(err)
		}
		total += n
		atPurgeUnlocked()
		if n < purgeChunk {
			break
		}
		from = last
		if err := purgePause(ctx, time.Since(began)); err != nil {
			return fail(err)
		}
	}
	// The sweep after the chunks: a purge that deleted nothing has
	// nothing to sweep, unless one before it (of this process or another,
	// before a restart) stopped before its sweep was done: its context
	// ended, the sweep failed, or its process died. It sweeps with its own
	// cutoff, not the stopped one's: that one may have stopped with rows
	// of its days left, whose counters must stay.
	if total == 0 {
		owed, err := s.sweepOwed(ctx, cutoff)
		if err != nil {
			return fail(err)
		}
		if !owed {
			return 0, nil
		}
	}
	// The counters go last: until they do, they are what tells the next
	// purge a sweep is owed.
	if err := s.purgeRefusalHosts(ctx); err != nil {
		return fail(err)
	}
	if err := s.purgeRefusalMessages(ctx); err != nil {
		return fail(err)
	}
	if err := s.dropEmptyCounters(ctx, cutoff); err != nil {
		return fail(err)
	}
	if err := s.reclaimSpace(ctx); err != nil {
		return fail(err)
	}
	return total, nil
}

// purgePause waits as long as the chunk before it took (at most a
// second) before the next: a retention purge is background upkeep, and
// back-to-back chunks kept a core and the disk busy for minutes, which
// put the log page's p95 at 365 ms during a 2.5-million-row purge on
// PostgreSQL. Pausing halves the purge's share at most, and a purge of a
// day's rows still ends within minutes.
func purgePause(ctx context.Context, chunk time.Duration) error {
	t := time.NewTimer(min(chunk, time.Second))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// purgedCounts is what a chunk's rows take from the counters (negative
// counts), and the days whose host counters go whole: a day before the
// cutoff's, which the walk has left (lastDay is the day of the chunk's
// newest row), lost every row. The host counters of the days before the
// cutoff's are not taken from row by row: a day has thousands of hosts,
// and a decrement of each in every chunk doubled the purge's cost. Until
// the walk leaves such a day its host counters count the rows deleted so
// far, but no page reads them: the Overview's and the log's host lists
// start yesterday at the earliest, and the cutoff is at least a day ago.
// Everything else (the hours, and the hosts of the cutoff's day, which
// the log keeps in part) loses exactly the rows deleted.
func purgedCounts(chunk []Refusal, cutoff, lastDay time.Time) (map[countKey]count, []time.Time) {
	counts := countRows(chunk)
	cutDay := utcDay(cutoff)
	var left []time.Time
	for k, c := range counts {
		if k.dim == dimHost && k.period.Before(cutDay) {
			delete(counts, k)
			if k.period.Before(lastDay) && !slices.ContainsFunc(left, k.period.Equal) {
				left = append(left, k.period)
			}
			continue
		}
		c.n = -c.n
		counts[k] = c
	}
	slices.SortFunc(left, time.Time.Compare)
	return counts, left
}

// dropEmptyCounters deletes the counters the purge's chunks took to zero
// (those of the hours wholly before cutoff, and of any value the hour or
// day it cut no longer has) and the host counters of the days before the
// cutoff's that the walk did not leave (purgedCounts). Readers already
// pass over a zero counter (a purge stopped half-way leaves some); this
// keeps the table to the periods the log still holds. Under the write
// lock, so a counter the writer raises meanwhile is either seen raised or
// raised after.
func (s *Store) dropEmptyCounters(ctx context.Context, cutoff time.Time) error {
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(forgetDayRanges+" AND period < ?", utcDay(cutoff)).Error; err != nil {
			return err
		}
		return tx.Exec("DELETE FROM refusal_counts WHERE "+emptyCounters, hourOf(cutoff), dimHost, utcDay(cutoff)).Error
	})
	if err != nil {
		return fmt.Errorf("dropping the purged periods' counters: %w", err)
	}
	return nil
}

// forgetDayRanges, completed with the hours it applies to, marks the ID
// ranges of those hours' totals unknown where the purge deletes their
// days' host counters. A day the purge has left can still hold rows: one
// written late (an old time, a new ID) after the chunk that walked its
// time, or after the last chunk. Its host counter gone, a page of a broad
// host substring read from the host counters (refusal_host_days_pg.go)
// would miss it; an hour of unknown range tells that page to read the
// day's few rows instead. (A time filter over such an hour reads it
// without an upper ID bound, as it did before migration 15.)
const forgetDayRanges = "UPDATE refusal_counts SET min_id = 0, max_id = 0 WHERE dim = '" + dimTotal + "' AND n > 0"

// emptyCounters selects, with the arguments hourOf(cutoff), dimHost and
// utcDay(cutoff), the counters dropEmptyCounters deletes: those at or
// before the cutoff's hour that are zero, and the host counters of the
// days before the cutoff's. Both clauses are within one range of the
// primary key's first column, period.
const emptyCounters = "period <= ? AND (n <= 0 OR (dim = ? AND period < ?))"

// sweepOwed says whether a purge before this one deleted rows and stopped
// before its sweep was done, so that a purge finding no rows to delete
// sweeps all the same. The database says so, not the process's memory: a
// purge stopped by a shutdown, or a replica that died in one, leaves its
// sweep to whichever purge comes next, in any process. The sign is the
// counters the sweep deletes last (emptyCounters). A chunk that deleted
// a host's last refusal left its counter of the cutoff's day at zero, or
// its counter of an earlier day in place, or, once the walk left that
// day and deleted the day's host counters, the day's hours at zero. (A
// stored message whose last refusal was of the cutoff's own hour, of a
// host refused again later that day, leaves no sign; no search finds it,
// and the next purge that deletes rows sweeps it.) One probe of the
// primary key, from the oldest counter to the cutoff's hour: after a
// sweep that range holds just the cutoff day's host counters and the
// cutoff hour's others, and the probe stops at the first sign.
func (s *Store) sweepOwed(ctx context.Context, cutoff time.Time) (bool, error) {
	var owed []int
	if err := s.r.WithContext(ctx).Raw("SELECT 1 FROM refusal_counts WHERE "+emptyCounters+" LIMIT 1", hourOf(cutoff), dimHost, utcDay(cutoff)).Scan(&owed).Error; err != nil {
		return false, fmt.Errorf("looking for a sweep a stopped purge owes: %w", err)
	}
	return len(owed) > 0, nil
}

// unusedPurgeChunk is how many refused hosts, or stored messages, one
// statement of purgeUnused checks.
const unusedPurgeChunk = 500

// purgeRefusalHosts removes hosts no refusal names any more, walking the
// list in host order in short transactions. A host refused again after
// its chunk is inserted again by its batch. Each chunk is deleted in a
// transaction, so under the write lock: on PostgreSQL a lone statement
// takes none, and a batch naming the host again, not yet committed (its
// insert of the host does nothing while the host is listed), would lose
// its host from the list.
func (s *Store) purgeRefusalHosts(ctx context.Context) error {
	return purgeUnused[string](ctx, s, "refusal_hosts", "host",
		"DELETE FROM refusal_hosts WHERE host IN ? AND NOT EXISTS (SELECT 1 FROM refusals WHERE refusals.host = refusal_hosts.host)",
		"the refused-host list")
}

// purgeUnused walks table in key order, unusedPurgeChunk keys at a time,
// and runs del (a DELETE of the keys of "IN ?" that no row uses any
// more) on each chunk, in a transaction of its own (so under the write
// lock, and short: a writer waits for one chunk at most). The first
// chunk starts at the key's zero value inclusive: the empty host is a
// refused host (refusals of a malformed URL name none), and a walk that
// began after it never purged it.
func purgeUnused[K cmp.Ordered](ctx context.Context, s *Store, table, key, del, what string) error {
	var after K
	from := key + " >= ?"
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var keys []K
		if err := s.r.WithContext(ctx).Table(table).Where(from, after).Order(key).Limit(unusedPurgeChunk).Pluck(key, &keys).Error; err != nil {
			return fmt.Errorf("reading %s: %w", what, err)
		}
		if len(keys) == 0 {
			return nil
		}
		if err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return tx.Exec(del, keys).Error }); err != nil {
			return fmt.Errorf("purging %s: %w", what, err)
		}
		after, from = keys[len(keys)-1], key+" > ?"
	}
}

// purgeChunk deletes one chunk of refusals from from to before cutoff,
// oldest first, with their search text, and takes them from the
// counters, in one transaction, and returns how many it deleted and the
// time of the newest. The next chunk starts at that time: PostgreSQL
// keeps a deleted row's index entries until VACUUM, and a chunk that
// sought the oldest rows from the start of the time index walked every
// entry the chunks before it had deleted (millions, by the end of a big
// purge).
//
// The counters lose exactly the rows deleted, read in the same
// transaction under the write lock: recounting the hour a purge cuts
// from reads made outside the lock let another purge or the writer
// change it in between and left it stale (the count, and an ID range
// that no longer covered a row just written). The hours' ID ranges are
// left as they are: still bounds of the rows they count, only wider.
func (s *Store) purgeChunk(ctx context.Context, from, cutoff time.Time) (n int64, last time.Time, err error) {
	err = s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Table("refusals").Select("id, time, "+strings.Join(countedColumns(), ", ")).Where("time < ?", cutoff)
		if !from.IsZero() {
			q = q.Where("time >= ?", from)
		}
		chunk, err := scanCounted(q.Order("time").Limit(purgeChunk))
		if err != nil {
			return err
		}
		if len(chunk) == 0 {
			return nil
		}
		ids := make([]int64, len(chunk))
		for i, r := range chunk {
			ids[i] = r.ID
		}
		last = chunk[len(chunk)-1].Time
		if err := tx.Exec("DELETE FROM refusal_texts WHERE id IN ?", ids).Error; err != nil {
			return err
		}
		res := tx.Exec("DELETE FROM refusals WHERE id IN ?", ids)
		if res.Error != nil {
			return res.Error
		}
		if n = res.RowsAffected; n != int64(len(chunk)) {
			return fmt.Errorf("deleting %d refusals deleted %d", len(chunk), n)
		}
		counts, left := purgedCounts(chunk, cutoff, utcDay(last))
		for _, day := range left {
			if err := tx.Exec("DELETE FROM refusal_counts WHERE dim = ? AND period = ?", dimHost, day).Error; err != nil {
				return err
			}
			if err := tx.Exec(forgetDayRanges+" AND period >= ? AND period < ?", day, nextDay(day)).Error; err != nil {
				return err
			}
		}
		stx, err := newSQLTx(ctx, tx, &s.wStmts)
		if err != nil {
			return err
		}
		return addCounts(stx, counts)
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	return n, last, nil
}

// scanCounted reads q's rows (id, time and countedColumns, in that
// order) into refusals, by hand: the ORM's scan by reflection into the
// whole Refusal cost a purge more than taking the rows from the counters.
func scanCounted(q *gorm.DB) ([]Refusal, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := countedColumns()
	var out []Refusal
	dst := make([]any, 2+len(cols))
	for rows.Next() {
		out = append(out, Refusal{})
		r := &out[len(out)-1]
		dst[0], dst[1] = &r.ID, &r.Time
		for i, c := range cols {
			dst[2+i] = r.countedField(c)
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}
