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
// index. On an existing log each index is rebuilt in one pass that
// holds off writes, as migration 12's were: run `console migrate` in a
// quiet hour.
func partialTicketIndexes(tx *gorm.DB, e engine) error {
	if e != enginePostgres {
		return nil
	}
	for _, col := range partialIndexColumns {
		// col is one of the constants above, never input.
		for _, stmt := range []string{
			fmt.Sprintf("DROP INDEX IF EXISTS idx_refusals_%s_id", col),
			fmt.Sprintf("CREATE INDEX idx_refusals_%s_id ON refusals (%q, id) WHERE %q <> ''", col, col, col),
		} {
			if err := tx.Exec(stmt).Error; err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
	}
	return nil
}
