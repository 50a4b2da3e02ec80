package models

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// refusalText is a refusal's searchable text, lower-cased, in a table of
// its own keyed by the refusal's ID. A word can be anywhere in a URL or a
// message, so a search reads text rather than an index; reading it from
// this narrow table (about 150 bytes a row) instead of the refusal rows
// (about 550) is what keeps a page of a search within its time. The text
// is lower-cased here, in Go, so LIKE never has to fold case: the same
// query is exact on SQLite and PostgreSQL.
//
// On PostgreSQL the log writer's rows leave the message out of the text
// and name it in a msg_id column instead (refusal_messages.go); rows of
// the multi-row path and the backfill below hold it inline, which the
// search reads as well.
type refusalText struct {
	ID   int64  `gorm:"primaryKey;autoIncrement:false"`
	Text string `gorm:"not null;default:''"`
}

func (refusalText) TableName() string { return "refusal_texts" }

// maxSearchText bounds, in bytes, each part of a row's searchable text:
// the URL with its redirect chain, the message (refusal_messages.go caps
// it alike) and the trigger. Each part is capped by itself: capped as a
// whole, a URL padded past the bound (the page chooses it) pushed the
// message and trigger out of the text, so neither was found, and the
// engines disagreed (PostgreSQL keeps the message apart).
const maxSearchText = 1024

// searchText is what a search looks in: the URL, the redirect chain, the
// message and the trigger, lower-cased and capped.
func searchText(r *Refusal) string { return joinSearchText(r, true) }

// ownSearchText is searchText without the message: what a refusal_texts
// row holds when its message is stored in refusal_messages.
func ownSearchText(r *Refusal) string { return joinSearchText(r, false) }

func joinSearchText(r *Refusal, withMessage bool) string {
	n := len(r.URL)
	for _, u := range r.Redirects {
		n += 1 + len(u)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(r.URL)
	for _, u := range r.Redirects {
		if b.Len() >= maxSearchText {
			break
		}
		b.WriteByte('\n')
		b.WriteString(u)
	}
	text := capSearchText(strings.ToLower(b.String()))
	if withMessage {
		text += "\n" + capSearchText(strings.ToLower(r.Message))
	}
	return text + "\n" + capSearchText(strings.ToLower(r.Trigger))
}

// capSearchText cuts s to maxSearchText bytes, and the character cut in
// two with them.
func capSearchText(s string) string {
	if len(s) > maxSearchText {
		s = strings.ToValidUTF8(s[:maxSearchText], "")
	}
	return s
}

var textInsert = rowsStmt{head: "INSERT INTO refusal_texts (id, text) VALUES ", cols: 2}

// recordTexts stores the searchable text of rows, whose IDs the insert
// has just assigned, inside its transaction.
func recordTexts(tx sqlTx, rows []Refusal) error {
	args := make([]any, 0, 2*len(rows))
	for i := range rows {
		if rows[i].ID == 0 {
			return fmt.Errorf("models: a refusal was stored without an ID")
		}
		args = append(args, rows[i].ID, searchText(&rows[i]))
	}
	return textInsert.exec(tx, args)
}

// backfillChunk is how many refusals one backfill statement covers.
const backfillChunk = 50_000

// backfillRefusalTexts adds the searchable text of refusals stored before
// the table existed (or by an older version since): every refusal above
// the highest ID the table holds, in SQL, a chunk of IDs per statement.
// LOWER() folds ASCII only on SQLite, which is what those rows' URLs and
// the product's messages hold. The check on every open is two index
// lookups; a log of a million rows is filled once, in seconds.
func backfillRefusalTexts(db *gorm.DB) error {
	var top, done int64
	if err := db.Raw("SELECT COALESCE(MAX(id), 0) FROM refusals").Scan(&top).Error; err != nil {
		return err
	}
	if err := db.Raw("SELECT COALESCE(MAX(id), 0) FROM refusal_texts").Scan(&done).Error; err != nil || top <= done {
		return err
	}
	for after := done; after < top; after += backfillChunk {
		err := db.Exec(`INSERT INTO refusal_texts (id, text)
			SELECT id, SUBSTR(LOWER(url || ' ' || redirects || ' ' || message || ' ' || trigger_info), 1, ?)
			FROM refusals WHERE id > ? AND id <= ?`, maxSearchText, after, after+backfillChunk).Error
		if err != nil {
			return fmt.Errorf("filling the refusals' search text: %w", err)
		}
	}
	return nil
}
