package models

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// ReviewStatus is an admin's verdict on a refusal.
type ReviewStatus string

// The review statuses. StatusUnreviewed is the zero value every new refusal
// starts with.
const (
	StatusUnreviewed  ReviewStatus = ""
	StatusExpected    ReviewStatus = "expected"     // the guard was right to refuse
	StatusNeedsAccess ReviewStatus = "needs_access" // an allowlist entry is probably missing
	StatusReviewed    ReviewStatus = "reviewed"     // looked at, no further action
)

// Valid reports whether s is one of the statuses above.
func (s ReviewStatus) Valid() bool {
	switch s {
	case StatusUnreviewed, StatusExpected, StatusNeedsAccess, StatusReviewed:
		return true
	}
	return false
}

func (s ReviewStatus) check() error {
	if !s.Valid() {
		return fmt.Errorf("models: review status %q is not one of \"\", %q, %q, %q", string(s), StatusExpected, StatusNeedsAccess, StatusReviewed)
	}
	return nil
}

// Refusal is one request the guard refused, plus the admin's review of it.
//
// ID grows with insertion order and never repeats (AUTOINCREMENT), which is
// what makes it a stable keyset cursor. The single-column indexes below are
// effectively (column, id) indexes: SQLite appends the rowid to every index
// entry, so "WHERE host = ? AND id < ? ORDER BY id DESC LIMIT 50" walks
// idx_refusals_host backwards and stops after 50 rows, without sorting.
type Refusal struct {
	ID   int64     `gorm:"primaryKey;autoIncrement"`
	Time time.Time `gorm:"not null;index"`
	Tool string    `gorm:"not null;default:'';index"` // fetch_url, take_screenshot, call_integration, proxy, check…
	// Integration is the integration a call_integration request was made
	// for ("" for every other tool): what an access request from this
	// refusal scopes its entry to. Indexed, for the log's filter.
	Integration string     `gorm:"not null;default:'';index"`
	URL         string     `gorm:"not null;default:''"`
	Host        string     `gorm:"not null;default:'';index"`
	Port        int        `gorm:"not null;default:0"`
	Addresses   StringList `gorm:"type:text;not null;default:''"` // resolved addresses
	Code        string     `gorm:"not null;default:'';index"`
	Reason      string     `gorm:"not null;default:'';index"`
	// Kind is "policy" or "network": a refusal of the policy, or a failure
	// of the network (DNS, connect, timeout, browser), kept apart in the
	// log's filters. Rows from before the column are migrated on open.
	Kind    string `gorm:"not null;default:'';index"`
	Message string `gorm:"not null;default:''"`
	Fix     string `gorm:"not null;default:''"`
	// RemedyKind and RemedyValue are the refusal's typed remedy: "add_entry"
	// with the entry, "change_setting" with the settings key, or "" (none).
	RemedyKind  string `gorm:"not null;default:''"`
	RemedyValue string `gorm:"not null;default:''"`
	// RemedyInternal: the entry is best added as an internal host, which
	// does not narrow the caller's public web.
	RemedyInternal bool   `gorm:"not null;default:false"`
	Entry          string `gorm:"not null;default:''"` // allowlist entry involved, if any
	Agent          string `gorm:"not null;default:'';index"`
	Thread         string `gorm:"not null;default:''"`
	// Ticket is the help-desk ticket the caller named; "" for none.
	Ticket string `gorm:"not null;default:'';index"`
	// Trigger is stored as trigger_info: TRIGGER is an SQL keyword, and a
	// column named after it is a trap for every hand-written query.
	Trigger   string     `gorm:"not null;default:'';column:trigger_info"`
	Redirects StringList `gorm:"type:text;not null;default:''"` // redirect chain, oldest first
	// Proxied marks a request refused at the proxy (the standalone proxy,
	// or a screenshot's page load through the embedded one), as opposed to
	// a tool call: one refused screenshot can leave both, and this is what
	// tells them apart. Rows from before the column read false.
	Proxied bool `gorm:"not null;default:false"`
	// Count is how many alike refusals the row stands for: 1, or for a
	// burst the aggregator merged (refusal_aggregate.go), the requests of
	// one window with LastTime the last of them. Rows from before the
	// column read 1.
	Count    int64      `gorm:"column:repeat_count;not null;default:1"`
	LastTime *time.Time `gorm:"column:last_time"`

	Status     ReviewStatus `gorm:"not null;default:'';index"`
	Comment    string       `gorm:"not null;default:''"`
	ReviewedBy string       `gorm:"not null;default:''"`
	ReviewedAt *time.Time
}

// KindPolicy is the kind a row without one is stored with: a refusal that
// does not say it is a network failure is the policy's.
const KindPolicy = "policy"

// refusalBatchRows bounds how many rows one ORM insert carries (the
// would-refuse log's): with 24 columns, 500 rows stay well under SQLite's
// 32766 bound variables.
const refusalBatchRows = 500

// refusalColumns are the columns a new refusal is stored with, in the
// order appendRefusalValues gives them (the ID comes from the database).
var refusalColumns = []string{"time", "tool", "url", "host", "port", "addresses", "code", "reason", "kind", "message", "fix", "remedy_kind",
	"remedy_value", "remedy_internal", "entry", "agent", "thread", "ticket", "trigger_info", "redirects", "proxied", "status", "comment",
	"reviewed_by", "reviewed_at", "integration", "repeat_count", "last_time"}

// appendRefusalValues appends r's values of refusalColumns to dst.
func appendRefusalValues(dst []any, r *Refusal) []any {
	return append(dst, r.Time, r.Tool, r.URL, r.Host, r.Port, listText(r.Addresses), r.Code, r.Reason, r.Kind, r.Message, r.Fix, r.RemedyKind,
		r.RemedyValue, r.RemedyInternal, r.Entry, r.Agent, r.Thread, r.Ticket, r.Trigger, listText(r.Redirects), r.Proxied, string(r.Status),
		r.Comment, r.ReviewedBy, r.ReviewedAt, r.Integration, r.Count, r.LastTime)
}

// refusalInsert stores refusals and returns their IDs (SQLite's path;
// PostgreSQL's is a COPY, log_copy_pg.go).
var refusalInsert = rowsStmt{
	head: "INSERT INTO refusals (" + strings.Join(refusalColumns, ", ") + ") VALUES ",
	tail: " RETURNING id",
	cols: len(refusalColumns),
}

// InsertRefusals stores rows synchronously in one transaction, with their
// search text, refused hosts and counters. Most callers want a
// RefusalWriter instead, which never makes the request path wait on the
// disk. IDs are assigned by the database (any ID set is ignored), a zero
// Time becomes now, and times are stored in UTC. It runs for every batch
// of the refusal log, so it binds plain values: in prepared multi-row
// statements on SQLite (multirow.go), in COPY on PostgreSQL
// (log_copy_pg.go).
func (s *Store) InsertRefusals(ctx context.Context, rows []Refusal) error {
	if len(rows) == 0 {
		return nil
	}
	prepared := make([]Refusal, len(rows))
	now := time.Now().UTC()
	for i, r := range rows {
		r.ID = 0
		if r.Time.IsZero() {
			r.Time = now
		}
		r.Time = r.Time.UTC()
		if r.Kind == "" {
			r.Kind = KindPolicy
		}
		if r.ReviewedAt != nil {
			t := r.ReviewedAt.UTC()
			r.ReviewedAt = &t
		}
		if r.Count < 1 {
			r.Count = 1
		}
		if r.LastTime != nil {
			t := r.LastTime.UTC()
			r.LastTime = &t
		}
		r.capStrings() // the writer's rows are capped already; a direct call's too
		prepared[i] = r
	}
	var err error
	if s.engine == enginePostgres {
		err = s.copyRefusals(ctx, prepared)
	} else {
		err = s.insertRefusalRows(ctx, prepared)
	}
	if err != nil {
		return fmt.Errorf("models: storing %d refusals in %q: %w", len(rows), s.path, err)
	}
	return nil
}

// insertRefusalRows is InsertRefusals in multi-row statements.
func (s *Store) insertRefusalRows(ctx context.Context, rows []Refusal) error {
	args := make([]any, 0, len(rows)*refusalInsert.cols)
	for i := range rows {
		args = appendRefusalValues(args, &rows[i])
	}
	if err := s.prepareAll(ctx, refusalInsert, hostInsert, textInsert, countUpsert); err != nil {
		return err
	}
	// SkipDefaultTransaction is on, so the transaction must be explicit for
	// the statements to commit (and hit the disk) once, together.
	return s.w.WithContext(ctx).Transaction(func(g *gorm.DB) error {
		tx, err := newSQLTx(ctx, g, &s.wStmts)
		if err != nil {
			return err
		}
		ids, err := refusalInsert.queryIDs(tx, args)
		if err != nil {
			return err
		}
		for i := range rows {
			rows[i].ID = ids[i]
		}
		if err := recordHosts(tx, rows); err != nil {
			return err
		}
		if err := recordTexts(tx, rows); err != nil {
			return err
		}
		return addCounts(tx, countRows(rows))
	})
}

// listText is l as its column holds it (StringList.Value).
func listText(l StringList) string {
	v, _ := l.Value() // a JSON array of strings always encodes
	s, _ := v.(string)
	return s
}

// RefusalByID returns one refusal, or a *NotFoundError.
func (s *Store) RefusalByID(ctx context.Context, id int64) (Refusal, error) {
	var rows []Refusal
	if err := s.r.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&rows).Error; err != nil {
		return Refusal{}, fmt.Errorf("models: reading refusal %d: %w", id, err)
	}
	if len(rows) == 0 {
		return Refusal{}, &NotFoundError{Kind: "refusal", Value: strconv.FormatInt(id, 10)}
	}
	return rows[0], nil
}

// ReviewRefusal records an admin's verdict, and the audit records given,
// in one transaction. Setting StatusUnreviewed clears the reviewer and
// review time but keeps the comment.
func (s *Store) ReviewRefusal(ctx context.Context, id int64, status ReviewStatus, comment, by string, audit ...Audit) error {
	return s.ReviewRefusals(ctx, []int64{id}, status, comment, by, audit...)
}
