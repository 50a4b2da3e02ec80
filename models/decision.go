package models

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// The decisions store keeps the allowed decisions of tickets, so that a
// ticket's timeline can show what its agent did reach beside what it was
// refused. (A decision that names no ticket is on no timeline, and is
// not stored: internal/app/decisions.go.)
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
//
// Rows are written in time order, so the ID order is the time order: the
// purge walks IDs and the table needs no time index. The one index is on
// the ticket, and only over rows that have one (a partial index), so the
// proxy's unlabelled traffic costs no index upkeep at all.
type Decision struct {
	// ID is a plain rowid (no AUTOINCREMENT bookkeeping per row): the
	// purge deletes the oldest rows, never the newest, so IDs still grow.
	ID   int64     `gorm:"primaryKey;autoIncrement:false"`
	Time time.Time `gorm:"not null"`
	Tool string    `gorm:"not null;default:''"`
	// Agent, Ticket, Thread and Trigger are the caller's, as on a refusal.
	Agent   string `gorm:"not null;default:''"`
	Ticket  string `gorm:"not null;default:'';index:idx_decisions_ticket,where:ticket <> ''"`
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
	return NewLogWriter(store.InsertDecisions, opts)
}

// capStrings cuts a decision's strings before it is queued, so the queue
// and the spill file are bounded in bytes (the URL to MaxDecisionURL, as
// the insert would).
func (d *Decision) capStrings() {
	d.URL = capText(d.URL, MaxDecisionURL)
	d.Host = capString(d.Host, MaxHostBytes)
	for _, f := range []*string{&d.Tool, &d.Agent, &d.Ticket, &d.Thread, &d.Trigger} {
		*f = capString(*f, MaxNameBytes)
	}
	d.Outcome = capString(d.Outcome, MaxCodeBytes)
	d.Code = capString(d.Code, MaxCodeBytes)
}

// approxBytes estimates a decision's memory in the queue.
func (d *Decision) approxBytes() int64 {
	return int64(160 + len(d.URL) + len(d.Host) + len(d.Tool) + len(d.Agent) + len(d.Ticket) + len(d.Thread) + len(d.Trigger) + len(d.Outcome) + len(d.Code))
}

// decisionInsert stores decisions (multirow.go; on PostgreSQL a COPY,
// log_copy_pg.go).
var decisionInsert = rowsStmt{
	head: "INSERT INTO decisions (" + strings.Join(decisionColumns, ", ") + ") VALUES ",
	cols: len(decisionColumns),
}

// decisionColumns are the decisions' columns, as appendDecisionValues
// gives them.
var decisionColumns = []string{"time", "tool", "agent", "ticket", "thread", "trigger_info", "host", "port", "url", "outcome", "code", "cached", "proxied", "elapsed_ms"}

// appendDecisionValues appends d's values of decisionColumns to dst,
// normalised: a zero Time becomes now, times are in UTC, the URL is
// capped.
func appendDecisionValues(dst []any, d *Decision, now time.Time) []any {
	at := d.Time
	if at.IsZero() {
		at = now
	}
	outcome := d.Outcome
	if outcome == "" {
		outcome = DecisionAllowed
	}
	return append(dst, at.UTC(), d.Tool, d.Agent, d.Ticket, d.Thread, d.Trigger, d.Host, d.Port,
		capText(d.URL, MaxDecisionURL), outcome, d.Code, d.Cached, d.Proxied, d.ElapsedMS)
}

// InsertDecisions stores rows in one transaction, in their order. IDs are
// assigned by the database, a zero Time becomes now, times are stored in
// UTC, and URLs are capped at MaxDecisionURL. It runs for every allowed
// request of the proxy, so it binds plain values in multi-row INSERTs
// (SQLite) or a COPY (PostgreSQL) rather than have the ORM reflect on
// each row.
func (s *Store) InsertDecisions(ctx context.Context, rows []Decision) error {
	if len(rows) == 0 {
		return nil
	}
	now := time.Now().UTC()
	values := make([]any, 0, len(rows)*len(decisionColumns))
	for i := range rows {
		d := rows[i]
		d.capStrings() // the writer's rows are capped already; a direct call's too
		values = appendDecisionValues(values, &d, now)
	}
	var err error
	if s.engine == enginePostgres {
		err = s.copyDecisions(ctx, values)
	} else {
		err = s.insertDecisionRows(ctx, values)
	}
	if err != nil {
		return fmt.Errorf("models: storing %d decisions in %q: %w", len(rows), s.path, err)
	}
	return nil
}

// insertDecisionRows is InsertDecisions in multi-row statements over
// args, the values of decisionColumns row after row.
func (s *Store) insertDecisionRows(ctx context.Context, args []any) error {
	if err := s.prepareAll(ctx, decisionInsert); err != nil {
		return err
	}
	return s.w.WithContext(ctx).Transaction(func(g *gorm.DB) error {
		tx, err := newSQLTx(ctx, g, &s.wStmts)
		if err != nil {
			return err
		}
		return decisionInsert.exec(tx, args)
	})
}

// capText cuts s to at most n characters, the last being "…".
func capText(s string, n int) string {
	s = storable(s)
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
	// "ticket <> ''" lets SQLite use the partial index.
	err := s.r.WithContext(ctx).Where("ticket = ? AND ticket <> ''", ticket).Order("id DESC").Limit(limit + 1).Find(&rows).Error
	if err != nil {
		return nil, false, fmt.Errorf("models: reading the decisions of ticket %q: %w", ticket, err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	return rows, more, nil
}

// PurgeDecisionsBefore deletes decisions whose Time is before t, oldest
// first, in chunks of purgeChunk rows, each its own short transaction,
// and reports how many it deleted. IDs follow time, so it finds the first
// row to keep by walking IDs from the oldest (reading only the rows it
// then deletes) and deletes ID ranges below it.
func (s *Store) PurgeDecisionsBefore(ctx context.Context, t time.Time) (int64, error) {
	cutoff := t.UTC()
	db := s.w.WithContext(ctx)
	var keep int64
	err := db.Raw("SELECT COALESCE((SELECT id FROM decisions WHERE time >= ? ORDER BY id LIMIT 1), (SELECT COALESCE(MAX(id), 0) + 1 FROM decisions))", cutoff).Scan(&keep).Error
	if err != nil {
		return 0, fmt.Errorf("models: purging decisions before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("models: purging decisions before %s stopped after %d rows: %w", cutoff.Format(time.RFC3339), total, err)
		}
		res := db.Exec("DELETE FROM decisions WHERE id IN (SELECT id FROM decisions WHERE id < ? ORDER BY id LIMIT ?)", keep, purgeChunk)
		if res.Error != nil {
			return total, fmt.Errorf("models: purging decisions before %s after %d rows: %w", cutoff.Format(time.RFC3339), total, res.Error)
		}
		total += res.RowsAffected
		if res.RowsAffected < purgeChunk {
			return total, nil
		}
	}
}
