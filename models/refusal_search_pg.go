package models

import (
	"cmp"
	"slices"

	"gorm.io/gorm"
)

// The free-text search on PostgreSQL, where migration 12 gave the search
// text a trigram index (refusal_pg_indexes.go).
//
// A window of 200,000 rows (refusal_search.go) is read in 60-230 ms at ten
// million rows: over the page's target whenever a word is rare among the
// newest rows, as every word of the base log is below a flood of millions
// of rows that do not hold it. The trigram index finds a rare word's rows
// anywhere in the log in a few milliseconds, and a page it answers is
// complete: its newest matches below the cursor, or all of them and the
// end of the search. But the index is no help for a common word: it
// builds a bitmap of every matching row in the log (millions) before the
// first is read. So a page goes step by step, each step bounded:
//
//  1. The newest pgFirstWindow rows below the cursor, read in order: a
//     word common among them fills the page here.
//  2. A sample of the log says how many rows hold the words. Few: the
//     trigram index finds all of those below the first window (at most
//     trigramMaxRows; more and the step gives up).
//  3. Otherwise the window goes on, down to searchScanRows below the
//     cursor, as on SQLite.

// pgFirstWindow is how many rows the first step of a page reads. A
// variable only so that tests can show the steps on a small log.
var pgFirstWindow int64 = 20_000

// trigramSampleRows is how many rows, evenly spread over the log's IDs,
// step 2 reads to estimate how many rows hold the words. A variable only
// so that tests can make the sample miss.
var trigramSampleRows int64 = 1000

// trigramMaxRows bounds the rows the trigram index may return to a page:
// the index is asked only when the sample estimates at most this many in
// the whole log, and a sample that missed a commoner word costs at most
// this many rows read before the page reads its window instead. A
// variable only so that tests can show both ways on a small log.
var trigramMaxRows int64 = 10_000

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
	bottom := max(top-searchScanRows, floor)
	if bottom < low {
		more, err := q.windowIDs(db, bottom, low, limit+1-len(ids))
		if err != nil {
			return nil, 0, err
		}
		ids, low = append(ids, more...), bottom
	}
	return pageOfWindow(db, ids, limit, low, floor)
}

// trigramIDs returns the newest n IDs in [low, top) that match q, found
// through the trigram index, when a sample of the log says few rows hold
// the words and the index finds at most trigramMaxRows in [low, top);
// ok is false otherwise (or where the index is missing), and the caller
// reads its window.
func (q RefusalQuery) trigramIDs(db *gorm.DB, low, top int64, n int) (ids []int64, ok bool, err error) {
	words, err := SearchWords(q.Search)
	if err != nil || !indexableWords(words) {
		return nil, false, err
	}
	cond, args := textMatch(words)
	var sample struct {
		Indexed     bool
		Span, Found int64
		Hits        int64
	}
	// The sample reads trigramSampleRows IDs spread evenly from the first
	// row to the last, by the primary key: the index's cost is that of
	// the words' rows in the whole log, not only below the cursor.
	err = db.Raw(`WITH b AS (SELECT MIN(id) AS lo, MAX(id) AS hi FROM refusal_texts),
		s AS (SELECT t.text FROM refusal_texts t WHERE t.id = ANY(ARRAY(SELECT generate_series(b.lo, b.hi, GREATEST((b.hi - b.lo) / ?, 1)) FROM b)))
		SELECT to_regclass('idx_refusal_texts_trgm') IS NOT NULL AS indexed, (SELECT COALESCE(hi - lo + 1, 0) FROM b) AS span,
			(SELECT COUNT(*) FROM s) AS found, (SELECT COUNT(*) FROM s AS t WHERE `+cond+`) AS hits`,
		append([]any{trigramSampleRows}, args...)...).Scan(&sample).Error
	if err != nil || !sample.Indexed || sample.Found == 0 || sample.Hits*sample.Span > trigramMaxRows*sample.Found {
		return nil, false, err
	}
	err = bitmapOnly(db, func() error {
		return db.Table("refusal_texts AS t").Where("t.id >= ? AND t.id < ?", low, top).Where(cond, args...).
			Limit(int(trigramMaxRows)+1).Pluck("t.id", &ids).Error
	})
	if err != nil || int64(len(ids)) > trigramMaxRows {
		return nil, false, err
	}
	slices.SortFunc(ids, func(a, b int64) int { return cmp.Compare(b, a) })
	if !q.onlySearch() && len(ids) > 0 {
		// The other filters, on the text's matches.
		other := q
		other.Search, other.BeforeID = "", 0
		ids, err = other.selectIDs(db.Where("id IN ?", ids), n, "")
		return ids, err == nil, err
	}
	return ids[:min(n, len(ids))], true, nil
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

// bitmapOnly runs fn with only bitmap scans left to the planner (of the
// trigram index, of the primary key's range, or both), inside the
// transaction of serialOnPostgres. Left to choose, it walked the primary
// key through the whole range, estimating the words' rows from a
// histogram of a hundred texts.
func bitmapOnly(db *gorm.DB, fn func() error) (err error) {
	for _, set := range []string{"SET LOCAL enable_indexscan = off", "SET LOCAL enable_seqscan = off"} {
		if err := db.Exec(set).Error; err != nil {
			return err
		}
	}
	defer func() {
		for _, reset := range []string{"RESET enable_indexscan", "RESET enable_seqscan"} {
			if rerr := db.Exec(reset).Error; rerr != nil && err == nil {
				err = rerr
			}
		}
	}()
	return fn()
}
