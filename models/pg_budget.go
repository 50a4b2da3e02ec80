package models

import (
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// errPastBudget says PostgreSQL cancelled a statement withinBudget ran,
// at its budget.
var errPastBudget = errors.New("models: the statement ran past its budget")

// withinBudget runs fn's reads on PostgreSQL in a read-only transaction
// (a savepoint inside the caller's, which takes no write lock) where
// every statement is cancelled after budget, with settings (such as
// "enable_seqscan = off") for those statements too. A cancelled statement
// gives errPastBudget, and the savepoint's rollback leaves the caller's
// transaction usable; otherwise the settings are undone for the
// statements after it (gorm never releases a savepoint, so SET LOCAL
// would outlive it). The trigram lookup and the message lookup ask
// PostgreSQL for what may be quick, and read rows another way when it is
// not.
func withinBudget(db *gorm.DB, budget time.Duration, settings []string, fn func(tx *gorm.DB) error) error {
	names := []string{"statement_timeout"}
	set := []string{"SET LOCAL statement_timeout = '" + budget.String() + "'"}
	for _, s := range settings {
		name, _, _ := strings.Cut(s, " =")
		names = append(names, name)
		set = append(set, "SET LOCAL "+s)
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(strings.Join(set, "; ")).Error; err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		reset := make([]string, len(names))
		for i, n := range names {
			reset[i] = "SET LOCAL " + n + " = DEFAULT"
		}
		return tx.Exec(strings.Join(reset, "; ")).Error
	}, &sql.TxOptions{ReadOnly: true})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" { // query_canceled: the statement timeout
		return errPastBudget
	}
	return err
}
