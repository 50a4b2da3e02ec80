package models

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

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
// right and costs a lookup per row; the store then remembers the word for
// a while (searchMemo), and the next pages read its rows' messages at
// once while the other words are still looked up.
//
// The lookup runs once a page (wordLookup), in its own statement: a
// message first stored after it, by a batch committed before the page's
// next statement, is not in its lists. Message IDs only grow (the writer
// stores them under the write lock, in ID order), so the condition also
// reads the message of every row whose message ID is above the highest
// the lookup saw: those rows are found too, at the cost of one lookup
// each, for the few rows written meanwhile.

// maxWordMessages is how many message IDs a word's condition names at
// most; a word in more messages is matched by reading each row's message.
// A variable only so that tests can show both ways on a small log.
var maxWordMessages = 10_000

// messageLookupBudget is how long the lookup of a search's messages may
// take before the search reads each row's message instead. A variable
// only so that a test can make a lookup run past it.
var messageLookupBudget = 25 * time.Millisecond

// messageMatches is what a lookup found: for each word, the IDs of the
// messages that hold it (empty when none does, nil when the lookup
// cannot say), and the highest message ID it saw.
type messageMatches struct {
	ids   [][]int64
	maxID int64
}

// indexable reports whether the trigram index can serve at least one
// word: a word matched by reading each row's message cannot be.
func (m messageMatches) indexable() bool {
	return slices.ContainsFunc(m.ids, func(ids []int64) bool { return ids != nil })
}

// wordLookup keeps a page's lookup for its later statements.
type wordLookup struct {
	words []string
	found messageMatches
}

// wordMessages returns the messages holding each of words (longest
// first, as the condition tests them): the page's lookup when it made
// one for the same words, and a new lookup otherwise, of the words the
// store does not remember the lookup giving up on (those are matched by
// reading each row's message, and the others keep their lists, so the
// trigram index may still serve them).
func (q RefusalQuery) wordMessages(db *gorm.DB, words []string) (messageMatches, error) {
	if q.lookup != nil && q.lookup.words != nil && slices.Equal(q.lookup.words, words) {
		return q.lookup.found, nil
	}
	found := messageMatches{ids: make([][]int64, len(words))}
	var ask []string
	var at []int // where each word asked is in words
	for i, w := range words {
		if !q.memo.slowFor(messageMemoKey(w)) {
			ask, at = append(ask, w), append(at, i)
		}
	}
	if len(ask) > 0 {
		got, err := lookupWordMessages(db, ask)
		if err != nil {
			return messageMatches{}, err
		}
		found.maxID = got.maxID
		for k, i := range at {
			if found.ids[i] = got.ids[k]; found.ids[i] == nil {
				q.memo.remember(messageMemoKey(ask[k]))
			}
		}
	}
	if q.lookup != nil {
		*q.lookup = wordLookup{words: slices.Clone(words), found: found}
	}
	return found, nil
}

// messageMemoKey is the memo's key for a word the message lookup gave up
// on, apart from the trigram index's keys (a NUL is in no search word:
// SearchWords reads it as U+FFFD).
func messageMemoKey(word string) []string { return []string{"\x00messages", word} }

// lookupWordMessages looks up the messages holding each word, in one
// statement within messageLookupBudget; a word it gives up on (more than
// maxWordMessages messages; every word, past the budget) has nil for its
// IDs. It runs withinBudget, so takes no write lock.
func lookupWordMessages(db *gorm.DB, words []string) (found messageMatches, err error) {
	found.ids = make([][]int64, len(words))
	parts := make([]string, 0, len(words)+1)
	args := make([]any, len(words))
	for i, w := range words {
		found.ids[i] = []int64{}
		// i is an index, never input.
		parts = append(parts, "(SELECT "+strconv.Itoa(i)+" AS i, id FROM refusal_messages WHERE text LIKE ? ESCAPE '\\' LIMIT "+strconv.Itoa(maxWordMessages+1)+")")
		args[i] = "%" + escapeLike(w) + "%"
	}
	parts = append(parts, "(SELECT -1, COALESCE(MAX(id), 0) FROM refusal_messages)")
	err = withinBudget(db, messageLookupBudget, nil, func(tx *gorm.DB) error {
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
			switch {
			case i < 0:
				found.maxID = id
			case found.ids[i] == nil:
			case len(found.ids[i]) == maxWordMessages:
				found.ids[i] = nil
			default:
				found.ids[i] = append(found.ids[i], id)
			}
		}
		return rows.Err()
	})
	if errors.Is(err, errPastBudget) {
		return messageMatches{ids: make([][]int64, len(words))}, nil
	}
	if err != nil {
		return messageMatches{}, err
	}
	return found, nil
}

// pgTextMatch is the condition that a refusal_texts row (t) holds every
// word, given each word's messages (in the same order): as LIKE, which
// the trigram index serves, when forIndex, and as strpos, which no index
// serves, for a read of rows (textMatch says why).
func pgTextMatch(words []string, found messageMatches, forIndex bool) (string, []any) {
	conds := make([]string, len(words))
	args := make([]any, 0, 4*len(words))
	const readMessage = "EXISTS (SELECT 1 FROM refusal_messages m WHERE m.id = t.msg_id AND strpos(m.text, ?) > 0)"
	for i, w := range words {
		own, arg := `strpos(t.text, ?) > 0`, any(w)
		if forIndex {
			own, arg = `t.text LIKE ? ESCAPE '\'`, "%"+escapeLike(w)+"%"
		}
		args = append(args, arg)
		switch ids := found.ids[i]; {
		case ids == nil:
			conds[i] = "(" + own + " OR " + readMessage + ")"
			args = append(args, w)
		case len(ids) == 0:
			conds[i] = "(" + own + " OR t.msg_id > ? AND " + readMessage + ")"
			args = append(args, found.maxID, w)
		default:
			conds[i] = "(" + own + " OR t.msg_id = ANY(?::bigint[]) OR t.msg_id > ? AND " + readMessage + ")"
			args = append(args, idArray(ids), found.maxID, w)
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
