package models

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// A search on PostgreSQL, where a refusal's message may be stored apart
// (refusal_messages.go): a word matches a refusal_texts row when the
// row's own text holds it, or its message does.
//
// The messages holding each word are looked up first, in one statement
// (wordMessages), and the condition names their IDs: a log holds few
// messages, so the lookup is quick, and a test of an ID against a short
// list costs each row little more than the text's own test. Read per row
// instead, through a join, the messages made a window of 10,000 rows
// take 14 ms instead of 1.5; in a subquery, the planner did not know the
// IDs, guessed them too many and read the whole ID range where the
// trigram index would have answered. Where the lookup cannot say (a word
// in more than maxWordMessages messages, or a lookup past its budget: a
// log whose messages are mostly unique, say each holding its own invalid
// URL), the condition reads each row's message by its ID, which is always
// right and costs a lookup per row.

// maxWordMessages is how many message IDs a word's condition names at
// most; a word in more messages is matched by reading each row's message.
// A variable only so that tests can show both ways on a small log.
var maxWordMessages = 10_000

// messageLookupBudget is how long the lookup of a search's messages may
// take before the search reads each row's message instead.
const messageLookupBudget = 25 * time.Millisecond

// wordMessages returns, for each word, the IDs of the messages that hold
// it: empty when none does, nil when it cannot say (more than
// maxWordMessages, or past messageLookupBudget). It runs in a savepoint,
// which PostgreSQL's cancellation at the budget aborts.
func wordMessages(db *gorm.DB, words []string) ([][]int64, error) {
	msgs := make([][]int64, len(words))
	if len(words) == 0 {
		return msgs, nil
	}
	parts := make([]string, len(words))
	args := make([]any, len(words))
	for i, w := range words {
		msgs[i] = []int64{}
		// i is an index, never input.
		parts[i] = "(SELECT " + strconv.Itoa(i) + " AS i, id FROM refusal_messages WHERE text LIKE ? ESCAPE '\\' LIMIT " + strconv.Itoa(maxWordMessages+1) + ")"
		args[i] = "%" + escapeLike(w) + "%"
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL statement_timeout = '" + messageLookupBudget.String() + "'").Error; err != nil {
			return err
		}
		rows, err := tx.Raw(strings.Join(parts, " UNION ALL "), args...).Rows()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var i int
			var id int64
			if err := rows.Scan(&i, &id); err != nil {
				return err
			}
			if msgs[i] != nil {
				msgs[i] = append(msgs[i], id)
			}
			if len(msgs[i]) > maxWordMessages {
				msgs[i] = nil
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return tx.Exec("SET LOCAL statement_timeout = DEFAULT").Error
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" { // query_canceled: the statement timeout
		return make([][]int64, len(words)), nil
	}
	if err != nil {
		return nil, err
	}
	return msgs, nil
}

// pgTextMatch is the condition that a refusal_texts row (t) holds every
// word, given each word's messages (wordMessages, in the same order): as
// LIKE, which the trigram index serves, when forIndex, and as strpos,
// which no index serves, for a read of rows (textMatch says why).
func pgTextMatch(words []string, msgs [][]int64, forIndex bool) (string, []any) {
	conds := make([]string, len(words))
	args := make([]any, 0, 2*len(words))
	for i, w := range words {
		own, arg := `strpos(t.text, ?) > 0`, any(w)
		if forIndex {
			own, arg = `t.text LIKE ? ESCAPE '\'`, "%"+escapeLike(w)+"%"
		}
		args = append(args, arg)
		switch ids := msgs[i]; {
		case ids == nil:
			conds[i] = "(" + own + " OR EXISTS (SELECT 1 FROM refusal_messages m WHERE m.id = t.msg_id AND strpos(m.text, ?) > 0))"
			args = append(args, w)
		case len(ids) == 0:
			conds[i] = own
		default:
			conds[i] = "(" + own + " OR t.msg_id = ANY(?::bigint[]))"
			args = append(args, idArray(ids))
		}
	}
	return strings.Join(conds, " AND "), args
}

// idArray is ids as a PostgreSQL array literal: one parameter, however
// many IDs (a parameter each would meet the protocol's limit of 65,535).
func idArray(ids []int64) string {
	b := make([]byte, 0, 2+8*len(ids))
	b = append(b, '{')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, '}'))
}
