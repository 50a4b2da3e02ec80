package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Page sizes for ListRefusals.
const (
	DefaultRefusalPage = 50
	MaxRefusalPage     = 500
)

// RefusalQuery selects a page of refusals, newest first. Zero-valued fields
// do not filter.
type RefusalQuery struct {
	// BeforeID is the keyset cursor: only rows with a smaller ID are
	// returned. Pass the next value from the previous page; 0 starts at the
	// newest row.
	BeforeID int64
	// Limit is the page size: 0 means DefaultRefusalPage, at most
	// MaxRefusalPage.
	Limit int

	Code   string
	Reason string
	Tool   string
	Agent  string
	// Integration is the integration a call_integration request was made
	// for (indexed).
	Integration string
	// Kind is "policy" or "network" (indexed, like the columns above).
	Kind string
	// Host matches as a substring (case-insensitive for ASCII) unless
	// HostExact is set.
	Host      string
	HostExact bool
	// Status filters on a review status. StatusUnreviewed cannot be told
	// apart from "no filter", so Unreviewed asks for those rows instead.
	Status     ReviewStatus
	Unreviewed bool
	// Since is inclusive, Until exclusive.
	Since time.Time
	Until time.Time
	// Ticket matches the caller's ticket exactly (indexed).
	Ticket string
	// Search is free text: every word of it must appear, in any case, in
	// the URL, the redirect chain, the message or the trigger. Without a
	// ticket, a page searches at most searchScanRows rows (pgScanRows on
	// PostgreSQL, where a trigram index may answer instead: refusal_search.go).
	Search string

	// hostIn, when not nil, replaces the Host substring by the refused
	// hosts that contain it (resolveHosts).
	hostIn []string
	// drive, when set, names the column whose index PostgreSQL walks
	// (pgDriver).
	drive string
	// idLow and idHigh, when not 0, bound the IDs of rows in the time
	// filter (refusal_id_range.go), and a Newer page's cursor
	// (ListRefusalsAfter).
	idLow, idHigh int64
	// ascending reads the ID step oldest first: a Newer page, the rows
	// just above its cursor.
	ascending bool
	// memo is the store's memory of searches the trigram index could not
	// answer (refusal_search_pg.go).
	memo *searchMemo
	// lookup, when set, keeps the messages holding each word of the
	// search for the rest of the page (refusal_messages_search.go).
	lookup *wordLookup
}

func (q RefusalQuery) pageSize() (int, error) {
	switch {
	case q.Limit == 0:
		return DefaultRefusalPage, nil
	case q.Limit < 0 || q.Limit > MaxRefusalPage:
		return 0, fmt.Errorf("models: page size %d is out of range; use 1 to %d (0 means %d)", q.Limit, MaxRefusalPage, DefaultRefusalPage)
	}
	return q.Limit, nil
}

// filter adds the WHERE clauses for q (everything except the page size).
func (q RefusalQuery) filter(db *gorm.DB) (*gorm.DB, error) {
	if q.BeforeID < 0 {
		return nil, fmt.Errorf("models: cursor %d is negative; pass 0 for the newest page or a next value from a previous page", q.BeforeID)
	}
	if err := q.Status.check(); err != nil {
		return nil, err
	}
	if q.Unreviewed && q.Status != StatusUnreviewed {
		return nil, fmt.Errorf("models: refusal query asks for status %q and for unreviewed rows; choose one", q.Status)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return nil, fmt.Errorf("models: time range is empty: until %s is not after since %s; swap or widen them",
			q.Until.UTC().Format(time.RFC3339), q.Since.UTC().Format(time.RFC3339))
	}
	if q.BeforeID > 0 {
		db = db.Where("id < ?", q.BeforeID)
	}
	if q.idLow > 0 {
		db = db.Where("id >= ?", q.idLow)
	}
	if q.idHigh > 0 {
		db = db.Where("id <= ?", q.idHigh)
	}
	// A fixed order keeps the generated SQL identical for identical filters.
	for _, f := range [...]struct{ col, v string }{{"code", q.Code}, {"reason", q.Reason}, {"tool", q.Tool}, {"agent", q.Agent}, {"kind", q.Kind}, {"ticket", q.Ticket}, {"integration", q.Integration}} {
		if f.v == "" {
			continue
		}
		db = q.whereEquals(db, f.col, f.v)
		// The literal lets PostgreSQL use the partial index of such a
		// column (refusal_pg_partial.go), which leaves the rows without a
		// value out: a plan kept for any value must prove the index's
		// WHERE from the query itself.
		if slices.Contains(partialIndexColumns, f.col) {
			db = db.Where(f.col + " <> ''")
		}
	}
	switch {
	case q.hostIn != nil:
		db = db.Where("host IN ?", q.hostIn)
	case q.Host != "" && q.HostExact:
		db = q.whereEquals(db, "host", q.Host)
	case q.Host != "":
		db = db.Where(hostContains, containsPattern(q.Host))
	}
	switch {
	case q.Unreviewed:
		db = q.whereEquals(db, "status", "")
	case q.Status != StatusUnreviewed:
		db = q.whereEquals(db, "status", string(q.Status))
	}
	if !q.Since.IsZero() {
		db = db.Where(q.timeCondition(db, ">="), q.Since.UTC())
	}
	if !q.Until.IsZero() {
		db = db.Where(q.timeCondition(db, "<"), q.Until.UTC())
	}
	return q.searchFilter(db)
}

// storableValues is q with its column filters read as the stored values
// are written (storable): a NUL or bytes that are not UTF-8 (a shared
// link's ?host=%00) become U+FFFD. Bound as they came, they meant
// "contains anything" on SQLite (LIKE ends its pattern at a NUL) and
// failed on PostgreSQL, which refuses both in text. The search is read
// the same way by SearchWords; a ticket is checked as ASCII. The host is
// lower-cased as stored hosts are.
func (q RefusalQuery) storableValues() RefusalQuery {
	for _, v := range []*string{&q.Code, &q.Reason, &q.Tool, &q.Agent, &q.Integration, &q.Kind, &q.Host} {
		*v = storable(*v)
	}
	q.Host = storedHost(q.Host) // hosts are stored lower-cased (storedHost)
	return q
}

// escapeLike makes s match literally inside a LIKE pattern using '\' as the
// escape character, so a host filter of "a_b" does not match "axb".
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// hostContains is the case-insensitive substring match on host, written
// the same for both engines: SQLite's LIKE ignores ASCII case but
// PostgreSQL's does not, so both sides are lower-cased explicitly (the
// pattern by containsPattern). LOWER(host) reads only the host column, so
// SQLite still answers it from the host index alone.
const hostContains = `LOWER(host) LIKE ? ESCAPE '\'`

// containsPattern is the LIKE pattern for "contains sub", lower-cased.
func containsPattern(sub string) string {
	return "%" + escapeLike(strings.ToLower(sub)) + "%"
}

// indexHint is SQLite's INDEXED BY clause for index, or "" on PostgreSQL,
// which has no such clause and plans these queries well by itself.
func indexHint(db *gorm.DB, index string) string {
	if index == "" || db.Dialector.Name() == "postgres" {
		return ""
	}
	return " INDEXED BY " + index
}

// ListRefusals returns one page of refusals matching q, newest first, and
// the cursor for the next page (0 when this is the last page).
//
// It runs in two steps: first the IDs of the page, then those rows. The ID
// step can often be answered from an index alone (every index carries the
// rowid), which is what keeps time windows and rare host substrings fast on
// a million rows: scanning 30-byte index entries instead of 400-byte rows.
func (s *Store) ListRefusals(ctx context.Context, q RefusalQuery) ([]Refusal, int64, error) {
	q = q.storableValues()
	limit, err := q.pageSize()
	if err != nil {
		return nil, 0, err
	}
	db := s.r.WithContext(ctx)
	q.memo, q.lookup = &s.searches, &wordLookup{}
	q, none, err := q.boundIDs(db)
	if err != nil || none {
		return nil, 0, err
	}
	// One extra ID tells us whether another page exists without a COUNT.
	var ids []int64
	var next int64
	if q.windowed() {
		err = serialOnPostgres(db, func(db *gorm.DB) (err error) {
			ids, next, err = q.searchIDs(db, limit)
			return err
		})
	} else {
		ids, err = q.pageIDs(db, limit+1)
		if len(ids) > limit {
			ids = ids[:limit]
			next = ids[limit-1]
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("models: listing refusals: %w", err)
	}
	if len(ids) == 0 {
		return nil, next, nil
	}
	var rows []Refusal
	if err := db.Where("id IN ?", ids).Order("id DESC").Find(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("models: reading refusal page: %w", err)
	}
	return rows, next, nil
}

// recentScan is how many of the newest rows a host-substring search walks in
// ID order before switching to the host index. Substrings matching more
// than about 1% of rows fill a page within it (about a millisecond); rarer
// ones then scan the compact host index once (about 55 ms at a million rows)
// instead of every full row (over a second). Measured on the benchmark
// database: a bigger window mostly adds its own cost to the rare case.
const recentScan = 5000

// pageIDs returns up to n IDs matching q, newest first.
func (q RefusalQuery) pageIDs(db *gorm.DB, n int) ([]int64, error) {
	if !q.onlyHostSubstring() {
		q, none, err := q.resolveHosts(db)
		if err != nil || none {
			return nil, err
		}
		return q.selectIDs(db, n, "")
	}
	top := q.BeforeID
	if top == 0 {
		if err := db.Raw("SELECT COALESCE(MAX(id), 0) + 1 FROM refusals").Scan(&top).Error; err != nil {
			return nil, err
		}
	}
	low := top - recentScan
	if low <= 1 {
		return q.selectIDs(db, n, "")
	}
	recent, err := q.selectIDs(db.Where("id >= ?", low), n, "")
	if err != nil || len(recent) == n {
		return recent, err
	}
	older := q
	older.BeforeID = low
	// Few hosts match: fetch their refusals by exact host. Many match: on
	// SQLite the host index, read once, is cheaper than a long IN list;
	// on PostgreSQL the days' host counters name the few that hold the
	// page, or failing that each host is probed (manyHostIDsOf). The
	// hosts are listed once, for both questions.
	limit := maxHostMatches
	if isPostgres(db) {
		limit = maxHostProbes
	}
	hosts, listed, err := hostsMatchingUpTo(db, q.Host, limit)
	if err != nil {
		return nil, err
	}
	var rest []int64
	switch {
	case listed && len(hosts) == 0:
	case listed && len(hosts) <= maxHostMatches:
		older.hostIn = hosts
		rest, err = older.selectIDs(db, n-len(recent), "")
	case isPostgres(db):
		rest, err = older.manyHostIDsOf(db, hosts, listed, n-len(recent))
	default:
		rest, err = older.selectIDs(db, n-len(recent), "idx_refusals_host")
	}
	return append(recent, rest...), err
}

// resolveHosts turns a host substring combined with other filters into
// the list of refused hosts containing it, when that list is short, so the
// host index answers instead of a LIKE over every row the other filters
// leave: "host=zzzz since 2000" read the whole log (1.2 s at a million
// rows) to find nothing. none reports that no refused host matches.
func (q RefusalQuery) resolveHosts(db *gorm.DB) (out RefusalQuery, none bool, err error) {
	if q.Host == "" || q.HostExact {
		return q, false, nil
	}
	hosts, few, err := hostsMatching(db, q.Host)
	if err != nil || !few {
		return q, false, err
	}
	if len(hosts) == 0 {
		return q, true, nil
	}
	q.hostIn = hosts
	return q, false, nil
}

// onlyHostSubstring reports whether a host substring is the only column
// filter, the one case where forcing the host index pays: the index alone
// answers the query. With any other filter, SQLite's own choice is better.
func (q RefusalQuery) onlyHostSubstring() bool {
	return q.Host != "" && !q.HostExact && q.Code == "" && q.Reason == "" && q.Tool == "" && q.Agent == "" && q.Kind == "" && q.Ticket == "" && q.Search == "" && q.Integration == "" &&
		q.Status == StatusUnreviewed && !q.Unreviewed && q.Since.IsZero() && q.Until.IsZero()
}

// selectIDs runs the ID step, optionally forcing an index.
func (q RefusalQuery) selectIDs(db *gorm.DB, n int, index string) ([]int64, error) {
	if q.hostIn != nil && isPostgres(db) {
		return q.perHostIDs(db, n)
	}
	db, err := q.idQuery(db, n, index)
	if err != nil {
		return nil, err
	}
	var ids []int64
	err = db.Pluck("id", &ids).Error
	return ids, err
}

// idQuery builds the ID step's statement.
func (q RefusalQuery) idQuery(db *gorm.DB, n int, index string) (*gorm.DB, error) {
	db, err := q.filter(db.Table("refusals" + indexHint(db, index)))
	if err != nil {
		return nil, err
	}
	return db.Order(q.idOrder(db)).Limit(n), nil
}

// ErrStopIteration may be returned by an EachRefusal callback to stop early;
// EachRefusal then returns nil.
var ErrStopIteration = errors.New("models: stop iteration")

// EachRefusal calls fn for every refusal matching q, newest first, starting
// below q.BeforeID. q.Limit is ignored. Rows are read in pages of
// MaxRefusalPage through short separate queries, so a CSV export of a
// million rows neither holds them all in memory nor keeps one read
// transaction open for the whole download. Rows inserted after the call
// starts are not visited (they have higher IDs).
func (s *Store) EachRefusal(ctx context.Context, q RefusalQuery, fn func(*Refusal) error) error {
	return eachPage(ctx, q, s.ListRefusals, fn)
}

// eachPage calls fn for every row of the pages list returns, following
// their cursors: EachRefusal and EachWouldRefusal.
func eachPage[T any](ctx context.Context, q RefusalQuery, list func(context.Context, RefusalQuery) ([]T, int64, error), fn func(*T) error) error {
	q.Limit = MaxRefusalPage
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows, next, err := list(ctx, q)
		if err != nil {
			return err
		}
		for i := range rows {
			if err := fn(&rows[i]); err != nil {
				if errors.Is(err, ErrStopIteration) {
					return nil
				}
				return err
			}
		}
		if next == 0 {
			return nil
		}
		q.BeforeID = next
	}
}
