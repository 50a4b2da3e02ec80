package models

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// The refusal log's indexes on PostgreSQL, for ten million rows and more.
//
// SQLite appends the rowid to every index entry, so its single-column
// index on code is in effect (code, id): "code = ? ORDER BY id DESC LIMIT
// 51" walks it backwards and stops after 51 entries. A PostgreSQL index on
// code alone is not ordered by id within a code, and the planner, assuming
// matching rows are spread evenly over the IDs, walks the primary key
// backwards and filters instead: fine for a common code, a scan of the
// whole log for a rare one (a 1-in-32 pair of filters took 0.7 s at a
// million rows). So on PostgreSQL every filtered column gets a (column,
// id) index, which replaces the column's own index (the same lookups, and
// one index fewer to keep up per insert). The time index becomes (time,
// id) the same way, for bounded time windows (refusal_query_pg.go).
//
// The free-text search and the host-substring filter match "%word%",
// which no B-tree serves: a page of a search read its 200,000-row window
// of refusal_texts (0.1-0.7 s on PostgreSQL). pg_trgm's trigram GIN
// indexes answer such a LIKE from the index for any word of three or more
// characters. pg_trgm ships with PostgreSQL itself (Debian's
// postgresql-15 package has it, in /usr/share/postgresql/15/extension) and
// is a trusted extension since PostgreSQL 13: a database owner may create
// it without superuser rights. Where it is missing or refused, the search
// still works, by reading its window, and the migration says so in the log.

// scaleIndexColumns are the refusal columns the log filters on by value.
var scaleIndexColumns = []string{"code", "reason", "tool", "agent", "kind", "status", "ticket", "integration", "host", "time"}

// createTrigramExtension creates pg_trgm unless the database has it. The
// extension is the whole database's, and each schema's write lock is its
// own (takeWriteLock): two deployments in two schemas migrating at once
// both find it missing, and the second's CREATE fails on the first's
// row (unique_violation) once that commits. The extension is there then,
// which is all this needs; without this the second went on without its
// trigram indexes for good.
func createTrigramExtension(tx *gorm.DB) error {
	err := tx.Transaction(func(tx *gorm.DB) error {
		return tx.Exec("CREATE EXTENSION IF NOT EXISTS pg_trgm").Error
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return nil
	}
	return err
}

// trigramSchema names the schema pg_trgm lives in, as SQL (quoted where
// it must be: regnamespace's text form already is), or "" without the
// extension. It lives in the schema it was first created in, which need
// not be on this database's search path, so its operator classes are
// named with it.
func trigramSchema(tx *gorm.DB) (string, error) {
	var schema string
	err := tx.Raw("SELECT COALESCE((SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'), '')").Scan(&schema).Error
	return schema, err
}

// refusalScaleIndexes is migration 12. On SQLite it does nothing: the
// rowid already gives SQLite's indexes that order. On an existing large
// log it builds each index in one pass (about a minute per index at ten
// million rows on two cores), holding off writes meanwhile: run `console
// migrate` in a quiet hour before starting the new release.
func refusalScaleIndexes(tx *gorm.DB, e engine) error {
	if e != enginePostgres {
		return nil
	}
	for _, col := range scaleIndexColumns {
		// col is one of the constants above, never input.
		stmts := []string{
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS idx_refusals_%s_id ON refusals (%q, id)", col, col),
			fmt.Sprintf("DROP INDEX IF EXISTS idx_refusals_%s", col),
		}
		for _, stmt := range stmts {
			if err := tx.Exec(stmt).Error; err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
	}
	// A savepoint: without pg_trgm the rest of the migration still commits.
	err := tx.Transaction(func(tx *gorm.DB) error {
		if err := createTrigramExtension(tx); err != nil {
			return err
		}
		schema, err := trigramSchema(tx)
		if err != nil {
			return err
		}
		for _, stmt := range []string{
			"CREATE INDEX IF NOT EXISTS idx_refusal_texts_trgm ON refusal_texts USING gin (text " + schema + ".gin_trgm_ops)",
			"CREATE INDEX IF NOT EXISTS idx_refusal_hosts_trgm ON refusal_hosts USING gin (LOWER(host) " + schema + ".gin_trgm_ops)",
		} {
			if err := tx.Exec(stmt).Error; err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return nil
	})
	if err != nil {
		slog.Warn("the refusal log's search runs without trigram indexes: searches read up to 60,000 rows a page; "+
			"let the database owner run CREATE EXTENSION pg_trgm and create the two indexes docs/USER-GUIDE.md names (The refusal log at ten million rows on PostgreSQL)",
			"err", errors.Unwrap(err))
	}
	return nil
}
