package models

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The log writers' inserts on PostgreSQL: COPY FROM STDIN for the rows,
// not multi-row INSERTs. Measured on the refusal log (500-row batches,
// the server's CPU per row): a prepared 500-row INSERT cost 66 µs of
// the server's CPU a row, most of it planning and binding 14,000
// parameters on every run (the pool plans every run afresh:
// plan_cache_mode, store_postgres.go); the same rows as one INSERT …
// SELECT FROM unnest(arrays) cost 33 µs, and COPY 22–27 µs, which is
// about what the table and its indexes cost. COPY has no parameter limit
// (pgx streams the rows in buffers of 64 KB), so a batch of any size is
// one COPY per table. The upserts (refused hosts, counters) cannot be a
// COPY: they run the multi-row statements SQLite runs (multirow.go), on
// the same transaction.
//
// Everything of one batch runs in one transaction that holds the write
// lock, as lockingPool's transactions do: a COPY that fails half-way
// rolls back the rows before it and the counters, and the writer retries
// the whole batch.

// pgWrite runs fn in a transaction holding the write lock (takeWriteLock),
// on the pgx connection under one of the pool's connections: COPY is
// pgx's own protocol, which database/sql does not carry.
func (s *Store) pgWrite(ctx context.Context, fn func(tx pgx.Tx) error) error {
	db, err := s.w.DB()
	if err != nil {
		return err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("models: the PostgreSQL pool holds a %T, not a pgx connection", driverConn)
		}
		tx, err := c.Conn().Begin(ctx)
		if err != nil {
			return err
		}
		// After a failure: a rollback that cannot run (the context ended)
		// closes the connection, which database/sql then discards.
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if _, err := tx.Exec(ctx, takeWriteLock, writeLockKey); err != nil {
			return fmt.Errorf("waiting for the write lock: %w", err)
		}
		if err := fn(tx); err != nil {
			return err
		}
		// Not cancellable: a commit cut off by the writer's shutdown may
		// still have committed, and the batch would then be kept, spilled
		// and written twice.
		return tx.Commit(context.WithoutCancel(ctx))
	})
}

// copyRows copies n rows, the columns of row(i), into table.
func copyRows(ctx context.Context, tx pgx.Tx, table string, cols []string, n int, row func(i int) []any) error {
	copied, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromSlice(n, func(i int) ([]any, error) { return row(i), nil }))
	if err != nil {
		return fmt.Errorf("copying %d rows into %s: %w", n, table, err)
	}
	if copied != int64(n) {
		return fmt.Errorf("copying %d rows into %s copied %d", n, table, copied)
	}
	return nil
}

// drawRefusalIDs takes $1 values of the refusals' ID sequence. The
// sequence is looked up once, in the subquery (OFFSET 0 keeps the planner
// from folding it into every row): called per row, as
// nextval(pg_get_serial_sequence(…)) was, the lookup (a catalog search
// and a name parse) cost 2.4 µs of PostgreSQL's time a row, five times
// the nextval itself.
const drawRefusalIDs = `SELECT nextval(s.seq)
	FROM (SELECT pg_get_serial_sequence('refusals', 'id')::regclass AS seq OFFSET 0) s, generate_series(1, $1)`

// copyRefusals stores rows (normalised by InsertRefusals) with their
// search text and messages, refused hosts and counters, in one
// transaction. The IDs are drawn from the table's sequence first, in
// order, so the refusals and their search text are two COPYs that agree
// on them.
func (s *Store) copyRefusals(ctx context.Context, rows []Refusal) error {
	return s.pgWrite(ctx, func(tx pgx.Tx) error {
		res, err := tx.Query(ctx, drawRefusalIDs, len(rows))
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(res, pgx.RowTo[int64])
		if err != nil {
			return fmt.Errorf("drawing %d refusal IDs: %w", len(rows), err)
		}
		if len(ids) != len(rows) {
			return fmt.Errorf("drawing %d refusal IDs gave %d", len(rows), len(ids))
		}
		slices.Sort(ids) // drawn in order; the order is the rows' and the log's
		for i := range rows {
			rows[i].ID = ids[i]
		}
		// One buffer for every row: pgx encodes a row before it asks
		// for the next.
		cols := append([]string{"id"}, refusalColumns...)
		buf := make([]any, 0, len(cols))
		err = copyRows(ctx, tx, "refusals", cols, len(rows), func(i int) []any {
			return appendRefusalValues(append(buf[:0], rows[i].ID), &rows[i])
		})
		if err != nil {
			return err
		}
		// The messages once each, the texts without them
		// (refusal_messages.go).
		msgIDs, err := recordMessages(ctx, tx, rows)
		if err != nil {
			return err
		}
		err = copyRows(ctx, tx, "refusal_texts", []string{"id", "text", "msg_id"}, len(rows), func(i int) []any {
			return append(buf[:0], rows[i].ID, ownSearchText(&rows[i]), messageIDValue(msgIDs[i]))
		})
		if err != nil {
			return err
		}
		// The hosts and counters, on this transaction: one statement
		// each, of arrays, on PostgreSQL (refusal_counts_pg.go).
		stx := sqlTx{ctx: ctx, pg: tx, dialect: "postgres"}
		if err := recordHosts(stx, rows); err != nil {
			return err
		}
		return addCounts(stx, countRows(rows))
	})
}

// copyDecisions stores decisions, the values of decisionColumns row
// after row (appendDecisionValues), in one COPY; the IDs come from the
// column's default, in the rows' order.
func (s *Store) copyDecisions(ctx context.Context, values []any) error {
	cols := len(decisionColumns)
	return s.pgWrite(ctx, func(tx pgx.Tx) error {
		return copyRows(ctx, tx, "decisions", decisionColumns, len(values)/cols, func(i int) []any { return values[i*cols : (i+1)*cols] })
	})
}
