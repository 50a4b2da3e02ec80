package models

import (
	"context"
	"fmt"
	"time"
)

// WouldRefusal is a request that was allowed, but that a report-only
// allowlist entry would have refused: what enforcing the entry would do.
// The rows live apart from the refusal log, so that they never count as
// refusals (the card's figures, host summaries, reviews) and are shown on
// their own page of the log.
type WouldRefusal struct {
	ID      int64     `gorm:"primaryKey;autoIncrement"`
	Time    time.Time `gorm:"not null;index"`
	Tool    string    `gorm:"not null;default:''"`
	Agent   string    `gorm:"not null;default:''"`
	URL     string    `gorm:"not null;default:''"`
	Host    string    `gorm:"not null;default:''"`
	Port    int       `gorm:"not null;default:0"`
	Code    string    `gorm:"not null;default:''"`
	Reason  string    `gorm:"not null;default:''"`
	Message string    `gorm:"not null;default:''"`
	Proxied bool      `gorm:"not null;default:false"`
}

func (r *WouldRefusal) stampNow(now time.Time) {
	if r.Time.IsZero() {
		r.Time = now
	}
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
	r.Host = capString(r.Host, MaxHostBytes)
	r.Message = capString(r.Message, MaxTextBytes)
	r.Tool = capString(r.Tool, MaxNameBytes)
	r.Agent = capString(r.Agent, MaxNameBytes)
	r.Code = capString(r.Code, MaxCodeBytes)
	r.Reason = capString(r.Reason, MaxCodeBytes)
}

// approxBytes estimates a would-be refusal's memory in the queue.
func (r *WouldRefusal) approxBytes() int64 {
	return int64(160 + len(r.URL) + len(r.Host) + len(r.Message) + len(r.Tool) + len(r.Agent) + len(r.Code) + len(r.Reason))
}

// InsertWouldRefusals stores rows in one transaction.
func (s *Store) InsertWouldRefusals(ctx context.Context, rows []WouldRefusal) error {
	if len(rows) == 0 {
		return nil
	}
	for i := range rows {
		rows[i].ID = 0
		rows[i].Time = rows[i].Time.UTC()
	}
	if err := s.w.WithContext(ctx).CreateInBatches(&rows, refusalBatchRows).Error; err != nil {
		return fmt.Errorf("models: storing %d would-be refusals: %w", len(rows), err)
	}
	return nil
}

// ListWouldRefusals returns the newest would-be refusals since t, at most
// limit, optionally of one agent.
func (s *Store) ListWouldRefusals(ctx context.Context, since time.Time, agent string, limit int) ([]WouldRefusal, error) {
	var out []WouldRefusal
	q := s.r.WithContext(ctx).Where("time >= ?", since.UTC())
	if agent != "" {
		q = q.Where("agent = ?", agent)
	}
	if err := q.Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("models: listing would-be refusals: %w", err)
	}
	return out, nil
}

// WouldRefusalCounts is how many requests report-only entries would have
// refused since a time, and from how many agents.
type WouldRefusalCounts struct {
	Requests int64
	Agents   int64
}

// CountWouldRefusals counts the would-be refusals since t.
func (s *Store) CountWouldRefusals(ctx context.Context, since time.Time) (WouldRefusalCounts, error) {
	var c WouldRefusalCounts
	err := s.r.WithContext(ctx).Model(&WouldRefusal{}).Where("time >= ?", since.UTC()).
		Select("COUNT(*) AS requests, COUNT(DISTINCT agent) AS agents").Scan(&c).Error
	if err != nil {
		return c, fmt.Errorf("models: counting would-be refusals: %w", err)
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
