package models

import (
	"fmt"
	"slices"
	"testing"
)

// The menus are the same whichever way the skip scan walks: the smallest
// MaxFacetValues values, ascending, with a column of more values than
// the downward scan reads falling back to the upward one, and values
// whose rows were purged gone from both.
func TestRefusalValuesAreTheSameDownwards(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rows := make([]Refusal, skipScanDownSteps+3)
		for i := range rows {
			// Agents in a scrambled order of IDs, so the order of the
			// values is not the order of the rows.
			rows[i] = Refusal{Agent: fmt.Sprintf("agent-%04d", (i*7919)%len(rows)), Tool: fmt.Sprintf("tool-%d", i%3)}
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		up := func(col string) []string {
			var out []string
			if err := s.r.Raw("SELECT DISTINCT "+col+" FROM refusals WHERE "+col+" > '' ORDER BY "+col+" LIMIT ?", MaxFacetValues).Scan(&out).Error; err != nil {
				t.Fatal(err)
			}
			return out
		}
		got, err := s.RefusalValues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := up("agent"); !slices.Equal(got.Agents, want) || len(want) != MaxFacetValues {
			t.Errorf("agents = %d from %q, want %d from %q", len(got.Agents), got.Agents[0], len(want), want[0])
		}
		if s.engine == enginePostgres {
			down, err := s.skipScansDown(ctx, "refusals", []string{"agent", "tool"})
			if agents, complete := down["agent"]; err != nil || complete {
				t.Errorf("downward scan of %d agents = %d values, complete %v, %v; want it to give up past %d", len(rows), len(agents), complete, err, skipScanDownSteps)
			}
			if tools := down["tool"]; !slices.Equal(tools, []string{"tool-0", "tool-1", "tool-2"}) {
				t.Errorf("downward scan of the tools = %q", tools)
			}
		}
		// A purged value leaves the menu.
		if err := s.w.Exec("DELETE FROM refusals WHERE tool = 'tool-1'").Error; err != nil {
			t.Fatal(err)
		}
		if got, err := s.RefusalValues(ctx); err != nil || !slices.Equal(got.Tools, []string{"tool-0", "tool-2"}) {
			t.Errorf("tools after deleting tool-1 = %q, %v", got.Tools, err)
		}
	})
}

// The filter menus list values byte by byte on both engines, as SQLite's
// BINARY collation does, even where PostgreSQL's columns follow a
// linguistic collation (a database created with en_US.UTF-8 sorts
// "alice" before "Zed"); with more values than a menu holds, the menus
// otherwise held different values too (found in review). The test's
// cluster is C.UTF-8, so its PostgreSQL half gives the agent column an
// ICU collation, as such a database would.
func TestRefusalValuesAreBytewiseOnBothEngines(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		if s.engine == enginePostgres {
			var icu bool
			if err := s.r.Raw(`SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')`).Scan(&icu).Error; err != nil {
				t.Fatal(err)
			}
			if !icu {
				t.Skip("this PostgreSQL has no ICU collation to sort linguistically")
			}
			if err := s.w.Exec(`ALTER TABLE refusals ALTER COLUMN agent TYPE text COLLATE "und-x-icu"`).Error; err != nil {
				t.Fatal(err)
			}
		}
		if err := s.InsertRefusals(ctx, []Refusal{{Agent: "alice", Tool: "proxy"}, {Agent: "Zed", Tool: "proxy"}}); err != nil {
			t.Fatal(err)
		}
		want := []string{"Zed", "alice"}
		got, err := s.RefusalValues(ctx)
		if err != nil || !slices.Equal(got.Agents, want) {
			t.Errorf("RefusalValues().Agents = %q, %v; want %q", got.Agents, err, want)
		}
		// The upward scan, which a column of many values takes, too.
		if up, err := s.skipScanUp(ctx, "refusals", "agent"); err != nil || !slices.Equal(up, want) {
			t.Errorf("skipScanUp(agent) = %q, %v; want %q", up, err, want)
		}
		// With more values than a menu holds, the menu holds the bytewise
		// smallest: "Zed" and agent-000 to agent-198, not agent-199.
		more := make([]Refusal, MaxFacetValues)
		for i := range more {
			more[i] = Refusal{Agent: fmt.Sprintf("agent-%03d", i), Tool: "proxy"}
		}
		if err := s.InsertRefusals(ctx, more); err != nil {
			t.Fatal(err)
		}
		got, err = s.RefusalValues(ctx)
		if n := len(got.Agents); err != nil || n != MaxFacetValues || got.Agents[0] != "Zed" || got.Agents[n-1] != "agent-198" {
			t.Errorf("RefusalValues().Agents = %d values, %v; want %d from Zed to agent-198", n, err, MaxFacetValues)
		}
	})
}
