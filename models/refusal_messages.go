package models

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// The refusal messages on PostgreSQL, each stored once (migration 19).
//
// A refusal's search text used to hold its message, and the trigram
// index split every row's text into trigrams: about 65 for a typical
// refusal, 39 of them from the message. Yet a log holds few messages:
// the guard writes one per reason and address ("10.0.0.7 is in the
// private range (10.0.0.0/8), which is refused."), so a flood of ten
// thousand refusals a second repeats a few thousand of them. The index
// was the largest part of PostgreSQL's work per refusal (36% of it under
// load), and most of that was splitting the same messages again.
//
// So the log writer on PostgreSQL stores each distinct message once, in
// refusal_messages (with a trigram index of its own), and a refusal's
// row in refusal_texts holds its own text (URL, redirects, trigger) and
// the ID of its message. A word matches a refusal when its own text
// holds it or its message does. Rows written before, or by the
// multi-row path (refusalText's own doc), keep the message in their text
// and no message ID: both forms are searched alike, so nothing is
// rewritten. SQLite keeps the message in the text: it has no trigram
// index to keep up.
//
// Nothing else writes refusal_messages, and the writer and the purge of
// messages no refusal uses any more (purgeRefusalMessages) both hold the
// write lock, so a message is never purged between the writer finding
// its ID and committing the rows that name it. No foreign key: checking
// one would cost every row a lookup, the very work this saves.

// messageText is r's message as the search reads it: lower-cased and
// capped, as searchText caps its text.
func messageText(r *Refusal) string {
	return capSearchText(strings.ToLower(r.Message))
}

// findMessagesQuery returns the ID and text of each message of $1
// stored already; insertMessagesQuery stores those of $1 (none stored
// yet) and returns the same. Most batches repeat messages the log holds,
// and then the first is all the batch runs: an insert that skips a
// stored message still looks it up and draws an ID for it first. The
// texts are joined, not tested with = ANY($1): PostgreSQL compared every
// stored message with every text of the array (its CPU a refusal went
// from 57 to 120-190 µs).
const (
	findMessagesQuery   = `SELECT m.id, m.text FROM unnest($1::text[]) AS u(text) JOIN refusal_messages m ON m.text = u.text`
	insertMessagesQuery = `INSERT INTO refusal_messages (text) SELECT DISTINCT unnest($1::text[]) ORDER BY 1 ON CONFLICT (text) DO NOTHING RETURNING id, text`
)

// recordMessages stores the distinct messages of rows not stored yet and
// returns, for each row, its message's ID (0 for a row without a
// message), inside the writer's transaction. Under the write lock no
// other writer stores a message meanwhile, so what the first query does
// not find, the insert stores.
func recordMessages(ctx context.Context, tx pgx.Tx, rows []Refusal) ([]int64, error) {
	texts := make([]string, len(rows))
	byText := make(map[string]int64)
	var distinct []string
	for i := range rows {
		texts[i] = messageText(&rows[i])
		if _, ok := byText[texts[i]]; !ok && texts[i] != "" {
			byText[texts[i]] = 0
			distinct = append(distinct, texts[i])
		}
	}
	ids := make([]int64, len(rows))
	if len(distinct) == 0 {
		return ids, nil
	}
	collect := func(query string, args []string) error {
		res, err := tx.Query(ctx, query, args)
		if err != nil {
			return err
		}
		var id int64
		var text string
		_, err = pgx.ForEachRow(res, []any{&id, &text}, func() error {
			byText[text] = id
			return nil
		})
		return err
	}
	if err := collect(findMessagesQuery, distinct); err != nil {
		return nil, fmt.Errorf("finding %d refusal messages: %w", len(distinct), err)
	}
	var missing []string
	for _, t := range distinct {
		if byText[t] == 0 {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		if err := collect(insertMessagesQuery, missing); err != nil {
			return nil, fmt.Errorf("storing %d refusal messages: %w", len(missing), err)
		}
	}
	for i, t := range texts {
		if t == "" {
			continue
		}
		if ids[i] = byText[t]; ids[i] == 0 {
			return nil, fmt.Errorf("storing %d refusal messages gave no ID for %.60q", len(missing), t)
		}
	}
	return ids, nil
}

// messageIDValue is a message ID as COPY writes it: NULL for none.
func messageIDValue(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// refusalMessages is migration 19. On SQLite it does nothing (the text
// keeps its message there). On PostgreSQL it adds the messages table,
// the message ID of each search text, and their indexes; existing rows
// keep their message in their text, so nothing is rewritten and the
// index on the new column, empty at first, takes one pass over the table.
// Every step may run again (a database that lost its migration records
// gets every migration again).
func refusalMessages(tx *gorm.DB, e engine) error {
	if e != enginePostgres {
		return nil
	}
	for _, stmt := range []string{
		"CREATE TABLE IF NOT EXISTS refusal_messages (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, text text NOT NULL UNIQUE)",
		"ALTER TABLE refusal_texts ADD COLUMN IF NOT EXISTS msg_id bigint",
		"CREATE INDEX IF NOT EXISTS idx_refusal_texts_msg ON refusal_texts (msg_id) WHERE msg_id IS NOT NULL",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	// The trigram index, where pg_trgm is there (migration 12 created it
	// if it could), in a savepoint: without it the rest commits, and the
	// search reads each word's messages without their index.
	err := tx.Transaction(func(tx *gorm.DB) error {
		schema, err := trigramSchema(tx)
		if err != nil || schema == "" {
			return errors.Join(err, errors.New("pg_trgm is not installed"))
		}
		return tx.Exec("CREATE INDEX IF NOT EXISTS idx_refusal_messages_trgm ON refusal_messages USING gin (text " + schema + ".gin_trgm_ops)").Error
	})
	if err != nil {
		slog.Warn("the refusal messages have no trigram index: a search looks for its words in every message; "+
			"let the database owner run CREATE EXTENSION pg_trgm and create the indexes docs/USER-GUIDE.md names (The refusal log at ten million rows on PostgreSQL)",
			"err", err)
	}
	return nil
}

// purgeRefusalMessages removes the messages no search text names any
// more, after a purge, a chunk of IDs at a time, each in a transaction
// (so under the write lock: see the package's note above).
func (s *Store) purgeRefusalMessages(ctx context.Context) error {
	if !isPostgres(s.w) {
		return nil
	}
	return purgeUnused[int64](ctx, s, "refusal_messages", "id",
		"DELETE FROM refusal_messages m WHERE m.id IN ? AND NOT EXISTS (SELECT 1 FROM refusal_texts t WHERE t.msg_id = m.id)",
		"the refusal messages")
}
