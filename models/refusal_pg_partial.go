package models

import (
	"fmt"

	"gorm.io/gorm"
)

// partialIndexColumns are the refusal columns that most rows leave empty:
// a ticket only when the agent names one, an integration only for
// call_integration. The log filters on a value of each, never on "none".
var partialIndexColumns = []string{"ticket", "integration"}

// partialTicketIndexes is migration 18: on PostgreSQL the (column, id)
// indexes of partialIndexColumns (migration 12) hold only the rows that
// have a value. Every refusal used to add an entry to both, (empty, id)
// for most, which no filter reads; each entry is work in the log
// writer's transaction and WAL. Measured with BenchmarkInsertRefusals'
// shape (rows without ticket or integration, four runs each way),
// PostgreSQL's CPU a refusal fell by 0-11 µs (mean 5) of 49-64.
//
// A filter on either column also says that the column is not empty
// (RefusalQuery.filter), so that a plan kept for any value can use the
// index. On an existing log each new index is built in one pass that
// holds off writes (reads go on), as migration 12's were: run `console
// migrate` in a quiet hour. Only then are the old indexes dropped and
// the new ones renamed: a DROP INDEX locks the table against reads too,
// until the migration commits, so it comes last and takes a moment.
func partialTicketIndexes(tx *gorm.DB, e engine) error {
	if e != enginePostgres {
		return nil
	}
	var swaps []string
	for _, col := range partialIndexColumns {
		// col is one of the constants above, never input.
		stmt := fmt.Sprintf("CREATE INDEX idx_refusals_%[1]s_id_set ON refusals (%[1]q, id) WHERE %[1]q <> ''", col)
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
		swaps = append(swaps, fmt.Sprintf("DROP INDEX IF EXISTS idx_refusals_%s_id", col),
			fmt.Sprintf("ALTER INDEX idx_refusals_%[1]s_id_set RENAME TO idx_refusals_%[1]s_id", col))
	}
	for _, stmt := range swaps {
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}
