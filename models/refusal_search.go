package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// Free-text search of the refusal log. Every word of the search must
// appear, in any case, in the URL, the redirect chain, the message or the
// trigger. That text is kept lower-cased (by Go) in refusal_texts
// (refusal_text.go) and the words are lower-cased the same way, so LIKE
// never folds case: no reliance on SQLite's case-insensitive LIKE. On
// PostgreSQL the log writer stores each message once, apart
// (refusal_messages.go), a word matches the text or its message
// (refusal_messages_search.go), and a pg_trgm index can serve it.
//
// A word found anywhere in a text cannot be answered from an ordinary
// index, so a search without a ticket reads rows. To keep every page
// fast however large the log grows, one page reads at most searchScanRows
// of the log's rows, newest first: when the page is not full by then, it
// ends early and its next cursor continues the search below the rows it
// read ("search older"). A common word fills its page within the first
// few thousand rows; a rare one takes a page per searchScanRows rows. A
// search within a ticket reads only that ticket's rows (indexed), whole.
// On PostgreSQL the window is smaller and a trigram index may answer a
// page to the end of the log instead (refusal_search_pg.go).

// searchScanRows is how many rows one page of a search reads at most:
// about 40 ms of CPU on the benchmark machine (models/refusal_bench_test.go).
// A variable only so that tests can show a window's end on a small log.
var searchScanRows int64 = 200_000

// MaxSearchWords and MaxSearchLen bound a search.
const (
	MaxSearchWords = 8
	MaxSearchLen   = 200
)

// SearchWords splits a search into its lower-cased words, or says what is
// wrong with it. The search is read as a refusal's text is stored
// (storable): a NUL, or bytes that are not UTF-8, stand for U+FFFD, so
// they find what a refusal with the same bytes stored, on both engines.
// PostgreSQL refuses a NUL in text, and SQLite's LIKE ended the pattern
// at it (a search for one matched every row).
func SearchWords(search string) ([]string, error) {
	if n := len([]rune(search)); n > MaxSearchLen {
		return nil, fmt.Errorf("the search has %d characters; use at most %d", n, MaxSearchLen)
	}
	var words []string
	for _, w := range strings.Fields(strings.ToLower(storable(search))) {
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	if len(words) > MaxSearchWords {
		return nil, fmt.Errorf("the search has %d words; use at most %d, the most telling ones", len(words), MaxSearchWords)
	}
	return words, nil
}

// textMatch is the condition that a refusal_texts row (t) holds every
// word, for a read of rows (a window, or the rows other filters chose).
// On PostgreSQL a word may also be in the row's message, stored apart
// (pgTextMatch, refusal_messages_search.go), and the condition is written
// with strpos, which no index serves: as LIKE, the planner took a
// rare-looking word to the trigram index, which can take seconds for one
// (refusal_search_pg.go) and is only asked within a budget. The longest
// word, likely the rarest, is tried first: most rows then fail on one
// test instead of two ("refused bad_port" tried "refused", in every row,
// first).
func (q RefusalQuery) textMatch(db *gorm.DB, words []string) (string, []any, error) {
	if !isPostgres(db) {
		cond, args := likeMatch(words)
		return cond, args, nil
	}
	words = longestFirst(words)
	found, err := q.wordMessages(db, words)
	if err != nil {
		return "", nil, err
	}
	cond, args := pgTextMatch(words, found, false)
	return cond, args, nil
}

// likeMatch is textMatch as LIKE conditions: SQLite's.
func likeMatch(words []string) (string, []any) {
	words = longestFirst(words)
	conds := make([]string, len(words))
	args := make([]any, len(words))
	for i, w := range words {
		conds[i] = `t.text LIKE ? ESCAPE '\'`
		args[i] = "%" + escapeLike(w) + "%"
	}
	return strings.Join(conds, " AND "), args
}

func longestFirst(words []string) []string {
	words = slices.Clone(words)
	slices.SortStableFunc(words, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return words
}

// searchFilter keeps the refusals whose text holds every word of
// q.Search: one probe of refusal_texts by ID per candidate row, so the
// other filters' indexes still choose the candidates.
func (q RefusalQuery) searchFilter(db *gorm.DB) (*gorm.DB, error) {
	words, err := SearchWords(q.Search)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	if len(words) == 0 {
		return db, nil
	}
	cond, args, err := q.textMatch(db, words)
	if err != nil {
		return nil, err
	}
	return db.Where("EXISTS (SELECT 1 FROM refusal_texts t WHERE t.id = refusals.id AND "+cond+")", args...), nil
}

// onlySearch reports whether the search is q's only filter, when the
// narrow text table alone answers the page.
func (q RefusalQuery) onlySearch() bool {
	return q.Code == "" && q.Reason == "" && q.Tool == "" && q.Agent == "" && q.Kind == "" && q.Host == "" &&
		q.Status == StatusUnreviewed && !q.Unreviewed && q.Since.IsZero() && q.Until.IsZero() && q.Ticket == "" && q.Integration == ""
}

// textIDs is the ID step of a search with no other filter, from
// refusal_texts alone: the newest n IDs in [low, top) whose text holds
// every word.
func (q RefusalQuery) textIDs(db *gorm.DB, low, top int64, n int) ([]int64, error) {
	words, err := SearchWords(q.Search)
	if err != nil {
		return nil, err
	}
	cond, args, err := q.textMatch(db, words)
	if err != nil {
		return nil, err
	}
	var ids []int64
	err = db.Table("refusal_texts AS t").Where("t.id >= ? AND t.id < ?", low, top).Where(cond, args...).
		Order("t.id DESC").Limit(n).Pluck("t.id", &ids).Error
	return ids, err
}

// windowed reports whether a page of q reads a bounded window of rows: a
// search that no indexed ticket narrows.
func (q RefusalQuery) windowed() bool {
	return strings.TrimSpace(q.Search) != "" && q.Ticket == ""
}

// searchIDs returns a windowed search's page: up to limit IDs below
// q.BeforeID among the searchScanRows rows below it, and the cursor of the
// next page. That cursor is the last ID shown when the page is full, the
// bottom of the window read when it is not and older rows remain, and 0
// when the log has been searched to its end.
//
// A time filter's ID range (boundIDs) bounds the windows: the first
// starts at the range's top, not at the newest row, and the search ends
// at its bottom, where no row of that time can be.
//
// On PostgreSQL a trigram index may answer the search to its end instead
// (refusal_search_pg.go).
func (q RefusalQuery) searchIDs(db *gorm.DB, limit int) ([]int64, int64, error) {
	top := q.BeforeID
	if q.idHigh > 0 && (top == 0 || top > q.idHigh+1) {
		top = q.idHigh + 1
	}
	if top == 0 {
		if err := db.Raw("SELECT COALESCE(MAX(id), 0) + 1 FROM refusals").Scan(&top).Error; err != nil {
			return nil, 0, err
		}
	}
	floor := q.idLow // 0 when the time has no lower bound: the log's start
	if isPostgres(db) {
		return q.pgSearchIDs(db, top, floor, limit)
	}
	low := max(top-searchScanRows, floor)
	ids, err := q.windowIDs(db, low, top, limit+1)
	if err != nil {
		return nil, 0, err
	}
	return pageOfWindow(db, ids, limit, low, floor)
}

// windowIDs returns the newest n IDs in [low, top) that match q.
func (q RefusalQuery) windowIDs(db *gorm.DB, low, top int64, n int) ([]int64, error) {
	if q.onlySearch() {
		return q.textIDs(db, low, top, n)
	}
	return q.selectIDs(db.Where("id >= ? AND id < ?", low, top), n, "")
}

// pageOfWindow makes a page of the matches (up to limit+1, newest first)
// of a search that read down to low, and its cursor: the last ID shown
// when the page is full, 0 when low is the search's floor or no older
// row is left, low otherwise.
func pageOfWindow(db *gorm.DB, ids []int64, limit int, low, floor int64) ([]int64, int64, error) {
	if len(ids) > limit {
		return ids[:limit], ids[limit-1], nil
	}
	if low <= floor {
		return ids, 0, nil
	}
	// The row just below low, looked for downwards from it: a purge's
	// deleted rows lie at the bottom of the primary key until VACUUM, and
	// an upward look walked all of them first.
	var older int64
	if err := db.Raw("SELECT COUNT(*) FROM (SELECT 1 FROM refusals WHERE id < ? ORDER BY id DESC LIMIT 1) AS o", low).Scan(&older).Error; err != nil {
		return nil, 0, err
	}
	if older == 0 {
		return ids, 0, nil
	}
	return ids, low, nil
}
