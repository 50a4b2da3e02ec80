package models

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// TestTicketAndIntegrationIndexesLeaveEmptyOut: on PostgreSQL the
// ticket and integration indexes hold only rows with a value, and a
// filter on either walks its index even in a plan kept for any value
// (plan_cache_mode force_generic_plan): the query must say the column is not empty
// itself, or the planner cannot use a partial index there and sorts.
func TestTicketAndIntegrationIndexesLeaveEmptyOut(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		now := time.Now()
		var rows []Refusal
		for i := range 300 {
			r := Refusal{Time: now, Tool: "fetch_url", Host: "h.example", URL: "http://h.example/", Code: "forbidden", Reason: "not_allowlisted", Kind: "policy"}
			if i%100 == 0 {
				r.Ticket, r.Integration, r.Tool = fmt.Sprintf("T-%d", i), "crm", "call_integration"
			}
			rows = append(rows, r)
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if err := s.w.Exec("ANALYZE refusals").Error; err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			col string
			q   RefusalQuery
		}{{"ticket", RefusalQuery{Ticket: "T-100"}}, {"integration", RefusalQuery{Integration: "crm"}}} {
			index := "idx_refusals_" + tc.col + "_id"
			var def string
			if err := s.r.Raw("SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?", index).Scan(&def).Error; err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(def, "WHERE ("+tc.col+" <> ''::text)") {
				t.Errorf("%s is %q, want it to leave rows without a %s out", index, def, tc.col)
			}
			var entries int64
			if err := s.r.Raw("SELECT reltuples::bigint FROM pg_class WHERE oid = ?::regclass", index).Scan(&entries).Error; err != nil {
				t.Fatal(err)
			}
			if entries != 3 {
				t.Errorf("%s holds %d entries, want the 3 rows with a %s", index, entries, tc.col)
			}
			plan := genericPlan(t, s, tc.q)
			if !strings.Contains(plan, index) || strings.Contains(plan, "Sort") {
				t.Errorf("a %s filter, planned for any value, does not walk %s:\n%s", tc.col, index, plan)
			}
			// A step of the filter menu's upward scan, whose value
			// comes from the step before: planned for any value.
			if plan := genericPlanOf(t, s, skipScanUpStep("refusals", tc.col, "$1"), "'T'"); !strings.Contains(plan, index) {
				t.Errorf("a step of the upward scan of %s values does not walk %s:\n%s", tc.col, index, plan)
			}
			found, _, err := s.ListRefusals(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]int{"ticket": 1, "integration": 3}[tc.col]; len(found) != want {
				t.Errorf("a %s filter found %d rows, want %d", tc.col, len(found), want)
			}
		}
	})
}

// genericPlan is PostgreSQL's plan for the ID step of a page of q with
// its values as parameters, planned once for any value.
func genericPlan(t *testing.T, s *Store, q RefusalQuery) string {
	t.Helper()
	stmt := s.r.Session(&gorm.Session{DryRun: true})
	db, err := q.idQuery(stmt, 51, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	st := db.Pluck("id", &ids).Statement
	// EXECUTE takes no bind parameters: the values go in as literals.
	values := make([]string, len(st.Vars))
	for i, v := range st.Vars {
		switch v := v.(type) {
		case string:
			values[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case int, int64:
			values[i] = fmt.Sprint(v)
		default:
			t.Fatalf("a value of type %T in %s", v, st.SQL.String())
		}
	}
	return genericPlanOf(t, s, st.SQL.String(), values...)
}

// genericPlanOf is PostgreSQL's plan for sql, its $n parameters planned
// once for any value, then run with values (SQL literals).
func genericPlanOf(t *testing.T, s *Store, sql string, values ...string) string {
	t.Helper()
	var plan []string
	err := s.w.Transaction(func(tx *gorm.DB) error {
		for _, sql := range []string{"SET LOCAL plan_cache_mode = force_generic_plan", "SET LOCAL enable_seqscan = off", "PREPARE page_ids AS " + sql} {
			if err := tx.Exec(sql).Error; err != nil {
				return fmt.Errorf("%s: %w", sql, err)
			}
		}
		if err := tx.Raw("EXPLAIN EXECUTE page_ids(" + strings.Join(values, ", ") + ")").Scan(&plan).Error; err != nil {
			return err
		}
		return tx.Exec("DEALLOCATE page_ids").Error
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}
