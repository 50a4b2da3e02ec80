package models

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestAddingToCountersIsAHotUpdateOnPostgres checks migration 17 by its
// effect: the writers' upsert of counters that exist already writes no
// new index entries. The transaction's own statistics
// (pg_stat_xact_user_tables) say how many of its updates were HOT.
func TestAddingToCountersIsAHotUpdateOnPostgres(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rows := make([]Refusal, 300)
		now := time.Now().UTC()
		for i := range rows {
			rows[i] = Refusal{ID: int64(i + 1), Time: now, Tool: "proxy", Agent: "agent-1", Host: fmt.Sprintf("h%03d.example.com", i), Reason: "not_allowlisted", Kind: "policy"}
		}
		var upd, hot int64
		err := s.pgWrite(ctx, func(tx pgx.Tx) error {
			stx := sqlTx{ctx: ctx, pg: tx, dialect: "postgres"}
			for range 2 {
				if err := addCounts(stx, countRows(rows)); err != nil {
					return err
				}
			}
			return tx.QueryRow(context.WithoutCancel(ctx), "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relid = 'refusal_counts'::regclass").Scan(&upd, &hot)
		})
		if err != nil {
			t.Fatal(err)
		}
		// Every key of the second batch existed: 300 hosts and the hour's
		// total, tool, agent and reason.
		if upd != 304 {
			t.Fatalf("the second batch updated %d counters; want 304", upd)
		}
		if hot != upd {
			t.Errorf("%d of %d counter updates were HOT; want all (the table's fillfactor leaves room for them)", hot, upd)
		}
	})
}
