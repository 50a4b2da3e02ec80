package models

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// WouldRefusal is a request that was allowed, but that a report-only
// allowlist entry would have refused: what enforcing the entry would do.
// The rows live apart from the refusal log, so that they never count as
// refusals (the card's figures, host summaries, reviews); the log shows
// them under its own outcome, "would refuse" (would_refusal_query.go).
//
// Like Refusal, the single-column indexes are (column, id) indexes in
// SQLite, so a filtered page walks one index backwards from its cursor.
// (agent, time) serves an agent's refusals within a time range and the
// card's count of agents (CountWouldRefusals).
type WouldRefusal struct {
	ID   int64     `gorm:"primaryKey;autoIncrement"`
	Time time.Time `gorm:"not null;index;index:idx_would_refusals_agent_time,priority:2"`
	Tool string    `gorm:"not null;default:'';index"`
	// Integration is the integration a call_integration request was made
	// for; "" for every other tool.
	Integration string `gorm:"not null;default:'';index"`
	Agent       string `gorm:"not null;default:'';index;index:idx_would_refusals_agent_time,priority:1"`
	Thread      string `gorm:"not null;default:''"`
	// Ticket is the help-desk ticket the caller named; "" for none.
	Ticket  string `gorm:"not null;default:'';index"`
	URL     string `gorm:"not null;default:''"`
	Host    string `gorm:"not null;default:'';index"`
	Port    int    `gorm:"not null;default:0"`
	Code    string `gorm:"not null;default:''"`
	Reason  string `gorm:"not null;default:''"`
	Message string `gorm:"not null;default:''"`
	Proxied bool   `gorm:"not null;default:false"`
	// Text is the URL and message, lower-cased by Go when stored: what
	// the free-text search reads, so that no engine folds case in SQL.
	Text string `gorm:"not null;default:''"`
}

func (r *WouldRefusal) stampNow(now time.Time) {
	if r.Time.IsZero() {
		r.Time = now
	}
}

// wouldRefusalText is a row's search text.
func wouldRefusalText(r WouldRefusal) string {
	return strings.ToLower(r.URL + "\n" + r.Message)
}

// backfillWouldRefusalTexts fills the search text of the rows stored
// before the column (migration 10). LOWER folds ASCII on both engines,
// which is all the stored URLs and messages of those rows need.
func backfillWouldRefusalTexts(tx *gorm.DB) error {
	return tx.Exec("UPDATE would_refusals SET text = LOWER(url || ' ' || message) WHERE text = ''").Error
}

// WouldRefusalWriter batches would-be refusals as RefusalWriter does.
type WouldRefusalWriter = BatchWriter[WouldRefusal]

// NewWouldRefusalWriter starts a writer of would-be refusals into store.
func NewWouldRefusalWriter(store *Store, opts RefusalWriterOptions) *WouldRefusalWriter {
	return NewLogWriter(store.InsertWouldRefusals, opts)
}

// capStrings cuts a would-be refusal's strings to the refusal log's
// bounds (refusal_caps.go) before it is queued.
func (r *WouldRefusal) capStrings() {
	r.URL = capString(r.URL, MaxURLBytes)
	r.Host = capString(storedHost(r.Host), MaxHostBytes)
	r.Message = capString(r.Message, MaxTextBytes)
	for _, f := range []*string{&r.Tool, &r.Integration, &r.Agent, &r.Thread, &r.Ticket} {
		*f = capString(*f, MaxNameBytes)
	}
	r.Code = capString(r.Code, MaxCodeBytes)
	r.Reason = capString(r.Reason, MaxCodeBytes)
}

// approxBytes estimates a would-be refusal's memory in the queue.
func (r *WouldRefusal) approxBytes() int64 {
	return int64(160 + len(r.URL) + len(r.Host) + len(r.Message) + len(r.Tool) + len(r.Integration) + len(r.Agent) +
		len(r.Thread) + len(r.Ticket) + len(r.Code) + len(r.Reason))
}

// InsertWouldRefusals stores rows in one transaction.
func (s *Store) InsertWouldRefusals(ctx context.Context, rows []WouldRefusal) error {
	if len(rows) == 0 {
		return nil
	}
	for i := range rows {
		rows[i].ID = 0
		rows[i].Time = rows[i].Time.UTC()
		rows[i].capStrings() // the writer's rows are capped already; a direct call's too
		rows[i].Text = wouldRefusalText(rows[i])
	}
	if err := s.w.WithContext(ctx).CreateInBatches(&rows, refusalBatchRows).Error; err != nil {
		return fmt.Errorf("models: storing %d would-be refusals: %w", len(rows), err)
	}
	return nil
}

// WouldRefusalCounts is how many requests report-only entries would have
// refused since a time, and from how many agents.
type WouldRefusalCounts struct {
	Requests int64
	Agents   int64
}

// CountWouldRefusals counts the would-be refusals since t, and their
// agents, from indexes alone: the requests from the time index, the
// agents by a skip scan of the (agent, time) index, one seek per agent
// ever seen and one more to ask whether it has a row since t. COUNT
// (DISTINCT agent) over the window would read and sort every row of it.
func (s *Store) CountWouldRefusals(ctx context.Context, since time.Time) (WouldRefusalCounts, error) {
	var c WouldRefusalCounts
	db := s.r.WithContext(ctx)
	if err := db.Raw("SELECT COUNT(*) FROM would_refusals WHERE time >= ?", since.UTC()).Scan(&c.Requests).Error; err != nil {
		return c, fmt.Errorf("models: counting would-be refusals: %w", err)
	}
	if c.Requests == 0 {
		return c, nil
	}
	err := db.Raw(`WITH RECURSIVE v(x) AS (
		SELECT MIN(agent) FROM would_refusals
		UNION ALL
		SELECT (SELECT MIN(agent) FROM would_refusals WHERE agent > v.x) FROM v WHERE v.x IS NOT NULL
	) SELECT COUNT(*) FROM v WHERE x IS NOT NULL AND EXISTS (SELECT 1 FROM would_refusals w WHERE w.agent = v.x AND w.time >= ?)`, since.UTC()).Scan(&c.Agents).Error
	if err != nil {
		return c, fmt.Errorf("models: counting the agents of would-be refusals: %w", err)
	}
	return c, nil
}

// PurgeWouldRefusalsBefore deletes would-be refusals older than t.
func (s *Store) PurgeWouldRefusalsBefore(ctx context.Context, t time.Time) (int64, error) {
	res := s.w.WithContext(ctx).Where("time < ?", t.UTC()).Delete(&WouldRefusal{})
	if res.Error != nil {
		return 0, fmt.Errorf("models: purging would-be refusals: %w", res.Error)
	}
	return res.RowsAffected, nil
}
