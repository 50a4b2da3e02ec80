package models

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Multi-row statements of the log writers (refusals and their search
// text, refused hosts and counters; decisions). They run for every
// refused or ticketed request, thousands a second under a flood, so they
// bind plain values in hand-written multi-row statements rather than have
// the ORM reflect on every row, and a batch is cut into statements of a
// few fixed sizes (stmtRows): each size's text is built once and prepared
// once per connection (stmts.go), where a statement of any other size
// would be parsed anew on every flush (parsing thousands of placeholders
// cost as much as storing the rows).
var stmtRows = [...]int{500, 50, 5, 1}

// maxStmtParams bounds the values one statement binds: below SQLite's
// 32,766 and PostgreSQL's 65,535 whatever the column count.
const maxStmtParams = 30_000

// rowsStmt is one multi-row statement: head, then rows of cols
// placeholders, then tail.
type rowsStmt struct {
	head, tail string
	cols       int
}

type stmtKey struct {
	rowsStmt
	rows     int
	postgres bool
}

var stmtTexts sync.Map // stmtKey → string

// text is the statement for n rows in the dialect's placeholders: ? for
// SQLite, $1… for PostgreSQL.
func (s rowsStmt) text(n int, dialect string) string {
	key := stmtKey{s, n, dialect == "postgres"}
	if t, ok := stmtTexts.Load(key); ok {
		return t.(string)
	}
	var b strings.Builder
	b.Grow(len(s.head) + len(s.tail) + n*s.cols*5)
	b.WriteString(s.head)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range s.cols {
			if c > 0 {
				b.WriteByte(',')
			}
			if key.postgres {
				b.WriteString("$" + strconv.Itoa(i*s.cols+c+1))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	b.WriteString(s.tail)
	t := b.String()
	stmtTexts.Store(key, t)
	return t
}

// chunks calls fn for consecutive chunks of rows rows, each of a size in
// stmtRows (largest first), with their first row's index.
func (s rowsStmt) chunks(rows int, fn func(first, n int) error) error {
	for first := 0; first < rows; {
		n := 1
		for _, size := range stmtRows {
			if size <= rows-first && size*s.cols <= maxStmtParams {
				n = size
				break
			}
		}
		if err := fn(first, n); err != nil {
			return err
		}
		first += n
	}
	return nil
}

// texts are the statement's texts of every size in stmtRows.
func (s rowsStmt) texts(dialect string) []string {
	out := make([]string, 0, len(stmtRows))
	for _, n := range stmtRows {
		out = append(out, s.text(n, dialect))
	}
	return out
}

// prepareAll prepares every size of stmts on the store's writer pool,
// before a transaction takes its connection.
func (s *Store) prepareAll(ctx context.Context, stmts ...rowsStmt) error {
	dialect := s.w.Dialector.Name()
	for _, st := range stmts {
		if err := s.wStmts.prepare(ctx, s.w, st.texts(dialect)...); err != nil {
			return err
		}
	}
	return nil
}

// exec runs the statement over args, cols values a row, inside tx.
func (s rowsStmt) exec(tx sqlTx, args []any) error {
	return s.chunks(len(args)/s.cols, func(first, n int) error {
		return tx.exec(s.text(n, tx.dialect), args[first*s.cols:(first+n)*s.cols]...)
	})
}

// queryIDs runs the statement, whose tail must be "RETURNING id", over
// args and returns the IDs of the rows in their order. Neither engine
// promises the order of RETURNING rows, but both number a statement's rows
// in the order of its VALUES (SQLite under its one write lock; PostgreSQL
// takes nextval row by row, so other sessions' IDs may fall between, never
// out of order): sorting each statement's IDs gives them in row order.
func (s rowsStmt) queryIDs(tx sqlTx, args []any) ([]int64, error) {
	ids := make([]int64, 0, len(args)/s.cols)
	err := s.chunks(len(args)/s.cols, func(first, n int) error {
		rows, err := tx.query(s.text(n, tx.dialect), args[first*s.cols:(first+n)*s.cols]...)
		if err != nil {
			return err
		}
		start := len(ids)
		if ids, err = scanIDs(rows, ids); err != nil {
			return err
		}
		if len(ids)-start != n {
			return fmt.Errorf("an insert of %d rows returned %d IDs", n, len(ids)-start)
		}
		slices.Sort(ids[start:])
		return nil
	})
	return ids, err
}

func scanIDs(rows *sql.Rows, ids []int64) ([]int64, error) {
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
