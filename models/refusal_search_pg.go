package models

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
)

// The free-text search on PostgreSQL (measured at ten million rows:
// models/refusal_pg_scale_bench_test.go).
//
// A search reads a window of rows below its cursor (refusal_search.go).
// On PostgreSQL, 200,000 rows of search text took 60-260 ms at ten
// million rows, over the page's target whenever the words are not among
// the newest rows: every word of the base log sits below a flood of 2.6
// million rows that do not hold it. So the window is smaller here
// (pgScanRows), and read in two parts with a chance for the trigram index
// (migration 12) in between:
//
//  1. The newest pgFirstWindow rows below the cursor, in ID order: a word
//     common among them fills the page here and stops.
//  2. The trigram index is asked for every row below the first part
//     that holds the words: when there are few (trigramMaxRows), the
//     page is complete (its newest matches, or all of them and the end
//     of the search), however deep they lie. The index is fast only for
//     words with a rare trigram: it intersects the rows of every trigram,
//     and a host name's ".example.com" is in millions (a rare URL took
//     it 3.5 s, "ticket" 4 s, where a word with an unknown trigram takes
//     0.1 ms). So it gets trigramBudget, after which PostgreSQL cancels
//     it, and the store remembers the words for a while (searchMemo), as
//     it does those with too many rows: later pages skip the attempt.
//  3. Otherwise the window goes on in ID order down to pgScanRows below
//     the cursor.

// pgScanRows is a page's window on PostgreSQL, and pgFirstWindow its
// first part. Variables only so that tests can show the steps on a
// small log.
var (
	pgScanRows    int64 = 60_000
	pgFirstWindow int64 = 10_000
)

// scanRows is how many rows a page of a search reads at most on db's
// engine.
func scanRows(db *gorm.DB) int64 {
	if isPostgres(db) {
		return pgScanRows
	}
	return searchScanRows
}

// trigramMaxRows bounds the rows the trigram index may return to a page:
// a word in more rows than this (a common word) costs at most this many
// rows read before the page reads its window instead. A variable only so
// that tests can show both ways on a small log.
var trigramMaxRows int64 = 10_000

// trigramBudget is how long the trigram index may take for a page.
const trigramBudget = 25 * time.Millisecond

// pgSearchIDs is searchIDs on PostgreSQL: the page of a search below top,
// down to floor.
func (q RefusalQuery) pgSearchIDs(db *gorm.DB, top, floor int64, limit int) ([]int64, int64, error) {
	low := max(top-pgFirstWindow, floor)
	ids, err := q.windowIDs(db, low, top, limit+1)
	if err != nil || len(ids) > limit || low <= floor {
		if err != nil {
			return nil, 0, err
		}
		return pageOfWindow(db, ids, limit, low, floor)
	}
	rest, ok, err := q.trigramIDs(db, floor, low, limit+1-len(ids))
	if err != nil {
		return nil, 0, err
	}
	if ok {
		return pageOfWindow(db, append(ids, rest...), limit, floor, floor)
	}
	if bottom := max(top-pgScanRows, floor); bottom < low {
		more, err := q.windowIDs(db, bottom, low, limit+1-len(ids))
		if err != nil {
			return nil, 0, err
		}
		ids, low = append(ids, more...), bottom
	}
	return pageOfWindow(db, ids, limit, low, floor)
}

// trigramIDs returns the newest n IDs in [low, top) that match q, found
// through the trigram index, when it finds at most trigramMaxRows of them
// in [low, top) within trigramBudget; ok is false otherwise (or where the
// index is missing, or the store remembers that it gave up on the same
// words), and the caller reads its window.
func (q RefusalQuery) trigramIDs(db *gorm.DB, low, top int64, n int) (ids []int64, ok bool, err error) {
	words, err := SearchWords(q.Search)
	if err != nil || !indexableWords(words) || q.memo.slowFor(words) {
		return nil, false, err
	}
	var indexed bool
	if err := db.Raw("SELECT to_regclass('idx_refusal_texts_trgm') IS NOT NULL").Scan(&indexed).Error; err != nil || !indexed {
		return nil, false, err
	}
	// In their own order: the memo knows the words in the search's.
	ordered := longestFirst(words)
	msgs, err := q.wordMessages(db, ordered)
	if err != nil || !msgs.indexable() {
		return nil, false, err
	}
	cond, args := pgTextMatch(ordered, msgs, true)
	found, err := trigramLookup(db, cond, args, low, top)
	if errors.Is(err, errTrigramTooSlow) || (err == nil && found == nil) {
		q.memo.remember(words)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	slices.SortFunc(found, func(a, b int64) int { return cmp.Compare(b, a) })
	if q.onlySearch() || len(found) == 0 {
		return found[:min(n, len(found))], true, nil
	}
	// The other filters, on the text's matches.
	other := q
	other.Search, other.BeforeID = "", 0
	ids, err = other.selectIDs(db.Where("id IN ?", found), n, "")
	return ids, err == nil, err
}

// errTrigramTooSlow says the trigram index did not answer within
// trigramBudget.
var errTrigramTooSlow = errors.New("models: the trigram index took too long")

// trigramLookup returns the IDs in [low, top) whose text matches cond,
// through the trigram index, in no order: nil (not empty) when there are
// more than trigramMaxRows, errTrigramTooSlow past trigramBudget. It runs
// in a savepoint of serialOnPostgres's transaction, which PostgreSQL's
// cancellation at the budget aborts, with only bitmap scans left to the
// planner (of the index, of the primary key's range, or both): left to
// choose, it walked the primary key through the whole range, estimating
// the words' rows from a histogram of a hundred texts.
func trigramLookup(db *gorm.DB, cond string, args []any, low, top int64) (ids []int64, err error) {
	err = withinBudget(db, trigramBudget, []string{"enable_indexscan = off", "enable_seqscan = off"}, func(tx *gorm.DB) error {
		query := tx.Table("refusal_texts AS t").Where("t.id < ?", top)
		if low > 0 {
			// Not "id >= 0": a bound below the column's statistics makes
			// the planner read the index's true minimum, through every
			// entry a purge left for VACUUM (hundreds of milliseconds).
			query = query.Where("t.id >= ?", low)
		}
		return query.Where(cond, args...).Limit(int(trigramMaxRows)+1).Pluck("t.id", &ids).Error
	})
	if errors.Is(err, errPastBudget) {
		return nil, errTrigramTooSlow
	}
	if err != nil {
		return nil, err
	}
	if int64(len(ids)) > trigramMaxRows {
		return nil, nil
	}
	if ids == nil {
		ids = []int64{}
	}
	return ids, nil
}

// indexableWords reports whether every word gives the trigram index
// something to look up: a run of three letters or digits (pg_trgm makes
// its trigrams of those). A word without one would make the index return
// every row.
func indexableWords(words []string) bool {
	for _, w := range words {
		run, found := 0, false
		for _, r := range w {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				if run++; run >= 3 {
					found = true
					break
				}
			} else {
				run = 0
			}
		}
		if !found {
			return false
		}
	}
	return len(words) > 0
}

// searchMemo remembers, per store, the searches the trigram index did not
// answer (too slow, or too many rows), so that the next pages of the same
// search, and the same search soon after, read their windows without
// trying it again. The zero value is ready; a nil memo remembers nothing.
type searchMemo struct {
	mu   sync.Mutex
	slow map[string]time.Time // words → when the index gave up
}

// searchMemoTTL is how long a search is remembered: the log changes, and
// a word the index could not answer may become one it can.
const searchMemoTTL = 10 * time.Minute

// searchMemoMax bounds the memo; when full it starts over.
const searchMemoMax = 1000

func (m *searchMemo) slowFor(words []string) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.slow[strings.Join(words, " ")]
	return ok && time.Since(at) < searchMemoTTL
}

func (m *searchMemo) remember(words []string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.slow == nil || len(m.slow) >= searchMemoMax {
		m.slow = make(map[string]time.Time)
	}
	m.slow[strings.Join(words, " ")] = time.Now()
}
