package models

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// The decisions store keeps the allowed decisions, so that a ticket's
// timeline can show what its agent did reach beside what it was refused.
// Refusals are not kept here: they have their own log (refusals), with a
// longer retention and a review, and a timeline reads both. An allowed
// decision is the hot path of the proxy, so a row is small (no lists, a
// capped URL), is written in batches by a BatchWriter, and is kept only
// for its own, shorter retention.

// MaxDecisionURL bounds a stored decision's URL, in characters. A longer
// one is cut and ends in "…": a timeline needs the page, not a tracking
// query string of kilobytes.
const MaxDecisionURL = 512

// DecisionAllowed is the outcome of an allowed decision (cached or not).
const DecisionAllowed = "allowed"

// Decision is one allowed egress decision: a tool call or a proxied
// request that was let through.
type Decision struct {
	ID   int64     `gorm:"primaryKey;autoIncrement"`
	Time time.Time `gorm:"not null;index"`
	Tool string    `gorm:"not null;default:''"`
	// Agent, Ticket, Thread and Trigger are the caller's, as on a refusal.
	Agent   string `gorm:"not null;default:''"`
	Ticket  string `gorm:"not null;default:'';index"`
	Thread  string `gorm:"not null;default:''"`
	Trigger string `gorm:"not null;default:'';column:trigger_info"`
	Host    string `gorm:"not null;default:''"`
	Port    int    `gorm:"not null;default:0"`
	URL     string `gorm:"not null;default:''"`
	// Outcome is DecisionAllowed; Code is empty for it. Both are columns
	// so an outcome that allows with a note (a report-only refusal) needs
	// no new table.
	Outcome string `gorm:"not null;default:''"`
	Code    string `gorm:"not null;default:''"`
	Cached  bool   `gorm:"not null;default:false"`
	Proxied bool   `gorm:"not null;default:false"`
	// ElapsedMS is how long the request took until its answer.
	ElapsedMS int64 `gorm:"not null;default:0"`
}

func (d *Decision) stampNow(now time.Time) {
	if d.Time.IsZero() {
		d.Time = now
	}
}

// DecisionWriter is the BatchWriter of the decisions store.
type DecisionWriter = BatchWriter[Decision]

// NewDecisionWriter starts a writer that batches decisions into store.
// Call Close on shutdown to flush what is still queued.
func NewDecisionWriter(store *Store, opts RefusalWriterOptions) *DecisionWriter {
	return newBatchWriter(store.InsertDecisions, opts)
}

// decisionBatchRows bounds one INSERT statement's rows: 15 columns × 1000
// stays well under SQLite's 32766 bound variables.
const decisionBatchRows = 1000

// InsertDecisions stores rows in one transaction. IDs are assigned by the
// database, a zero Time becomes now, times are stored in UTC, and URLs
// are capped at MaxDecisionURL.
func (s *Store) InsertDecisions(ctx context.Context, rows []Decision) error {
	if len(rows) == 0 {
		return nil
	}
	prepared := make([]Decision, len(rows))
	now := time.Now().UTC()
	for i, d := range rows {
		d.ID = 0
		if d.Time.IsZero() {
			d.Time = now
		}
		d.Time = d.Time.UTC()
		d.URL = capText(d.URL, MaxDecisionURL)
		if d.Outcome == "" {
			d.Outcome = DecisionAllowed
		}
		prepared[i] = d
	}
	err := s.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.CreateInBatches(&prepared, decisionBatchRows).Error
	})
	if err != nil {
		return fmt.Errorf("models: storing %d decisions in %q: %w", len(rows), s.path, err)
	}
	return nil
}

// capText cuts s to at most n characters, the last being "…".
func capText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// DecisionsOfTicket returns the newest limit (1 to MaxRefusalPage)
// decisions of ticket, newest first, and whether older ones exist.
func (s *Store) DecisionsOfTicket(ctx context.Context, ticket string, limit int) ([]Decision, bool, error) {
	if limit < 1 || limit > MaxRefusalPage {
		return nil, false, fmt.Errorf("models: decision page size %d is out of range; use 1 to %d", limit, MaxRefusalPage)
	}
	var rows []Decision
	err := s.r.WithContext(ctx).Where("ticket = ?", ticket).Order("id DESC").Limit(limit + 1).Find(&rows).Error
	if err != nil {
		return nil, false, fmt.Errorf("models: reading the decisions of ticket %q: %w", ticket, err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	return rows, more, nil
}

// PurgeDecisionsBefore deletes decisions whose Time is before t, in
// chunks of purgeChunk rows, each its own short transaction, and reports
// how many it deleted.
func (s *Store) PurgeDecisionsBefore(ctx context.Context, t time.Time) (int64, error) {
	return s.purgeBefore(ctx, "decisions", t)
}
