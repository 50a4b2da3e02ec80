package models

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"
)

// stmtCache holds the statements of the hot paths (the log writers'
// inserts, token lookups) prepared once on one pool, by text.
// database/sql prepares a pool's statement on each connection the first
// time it runs there, and a transaction reuses its connection's
// (Tx.StmtContext). The ORM's own cache (PrepareStmt) prepares a
// statement inside the first transaction that runs it, which ties it to
// that transaction, so every later transaction parsed it again: with
// multi-row statements of thousands of placeholders, that cost as much
// as storing the rows.
type stmtCache struct{ m sync.Map } // text → *sql.Stmt

// prepare makes sure texts are prepared on db. It must run outside any
// transaction: on SQLite the writer pool has one connection, which a
// transaction holds.
func (c *stmtCache) prepare(ctx context.Context, db *gorm.DB, texts ...string) error {
	var pool *sql.DB
	for _, text := range texts {
		if _, ok := c.m.Load(text); ok {
			continue
		}
		if pool == nil {
			var err error
			if pool, err = db.DB(); err != nil {
				return err
			}
		}
		st, err := pool.PrepareContext(ctx, text)
		if err != nil {
			return err
		}
		if _, loaded := c.m.LoadOrStore(text, st); loaded {
			st.Close()
		}
	}
	return nil
}

// get returns the prepared statement of text, preparing it first.
func (c *stmtCache) get(ctx context.Context, db *gorm.DB, text string) (*sql.Stmt, error) {
	if err := c.prepare(ctx, db, text); err != nil {
		return nil, err
	}
	st, _ := c.m.Load(text)
	return st.(*sql.Stmt), nil
}

// sqlTx is one of the store's transactions, run with the statements of
// a cache: a statement not prepared beforehand runs unprepared. On
// PostgreSQL's COPY path (log_copy_pg.go) it is a pgx transaction
// instead, whose connection prepares and caches statements by text
// itself.
type sqlTx struct {
	ctx     context.Context
	tx      *sql.Tx
	pg      pgx.Tx
	stmts   *stmtCache
	dialect string
}

// newSQLTx is the database/sql transaction under a GORM one.
func newSQLTx(ctx context.Context, tx *gorm.DB, stmts *stmtCache) (sqlTx, error) {
	t, ok := tx.Statement.ConnPool.(*sql.Tx)
	if !ok {
		return sqlTx{}, errors.New("models: not in a database/sql transaction")
	}
	return sqlTx{ctx: ctx, tx: t, stmts: stmts, dialect: tx.Dialector.Name()}, nil
}

func (t sqlTx) exec(text string, args ...any) error {
	if t.pg != nil {
		_, err := t.pg.Exec(t.ctx, text, args...)
		return err
	}
	if st, ok := t.stmts.m.Load(text); ok {
		_, err := t.tx.StmtContext(t.ctx, st.(*sql.Stmt)).ExecContext(t.ctx, args...)
		return err
	}
	_, err := t.tx.ExecContext(t.ctx, text, args...)
	return err
}

func (t sqlTx) query(text string, args ...any) (*sql.Rows, error) {
	if t.pg != nil {
		return nil, errors.New("models: a query that returns rows runs on database/sql, not on the COPY path's transaction")
	}
	if st, ok := t.stmts.m.Load(text); ok {
		return t.tx.StmtContext(t.ctx, st.(*sql.Stmt)).QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, text, args...)
}
