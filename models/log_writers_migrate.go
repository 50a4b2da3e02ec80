package models

import "gorm.io/gorm"

// logWriters is migration 11.
//
// A refusal row may stand for a burst of alike refusals: repeat_count (1
// for every row already there) and the time of the last of them.
//
// On PostgreSQL the decisions table's id had no default: it is a plain
// rowid on SQLite (autoIncrement:false keeps SQLite from AUTOINCREMENT's
// bookkeeping), but GORM made it a bare NOT NULL bigint on PostgreSQL, so
// every batch of allowed decisions failed there and the writer retried it
// for ever. It gets a sequence, started past the rows already there.
func logWriters(tx *gorm.DB, e engine) error {
	// Idempotent: on a new database the earlier migrations' AutoMigrate
	// of Refusal made the columns already.
	if err := tx.AutoMigrate(&Refusal{}); err != nil {
		return err
	}
	if e != enginePostgres {
		return nil
	}
	for _, stmt := range []string{
		"CREATE SEQUENCE IF NOT EXISTS decisions_id_seq OWNED BY decisions.id",
		"ALTER TABLE decisions ALTER COLUMN id SET DEFAULT nextval('decisions_id_seq')",
		"SELECT setval('decisions_id_seq', COALESCE((SELECT MAX(id) FROM decisions), 0) + 1, false)",
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	return nil
}
