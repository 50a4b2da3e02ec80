package models

import (
	"path/filepath"
	"reflect"
	"testing"
)

// legacyStore makes a database as a release before the kind column left
// it: no kind or remedy columns, lists stored as joined text, the old tool
// spellings. It returns the path; the store is closed.
func legacyStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "outbound.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	db := s.w
	for _, stmt := range []string{
		"DROP INDEX IF EXISTS idx_refusals_overview", // the Overview's until migration 14, which held kind
		"DROP INDEX idx_refusals_kind",
		"ALTER TABLE refusals DROP COLUMN kind",
		"ALTER TABLE refusals DROP COLUMN remedy_kind",
		"ALTER TABLE refusals DROP COLUMN remedy_value",
		"ALTER TABLE refusals DROP COLUMN proxied",
	} {
		if err := db.Exec(stmt).Error; err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	legacy := []struct {
		tool, host, code, reason, addresses, redirects string
		port                                           int
	}{
		{"fetch_url", "intranet.corp", "forbidden", "not_allowlisted", "10.0.0.5,10.0.0.6", "http://a.example/\nhttp://b.example/x?a=1,2", 8080},
		{"screenshot", "big.example.com", "too_large", "declared_size", "93.184.216.34", "", 443},
		{"integration", "nowhere.example.com", "unreachable", "dns", "", "", 443},
		{"proxy", "fe80::1", "forbidden", "internal_address", "fe80::1%eth0", "", 8443},
		{"fetch_url", "169.254.169.254", "forbidden", "metadata", "169.254.169.254", "", 80},
	}
	for _, r := range legacy {
		err := db.Exec(`INSERT INTO refusals (time, tool, url, host, port, addresses, code, reason, message, fix, entry, agent, thread, trigger_info, redirects, status, comment, reviewed_by)
			VALUES ('2025-03-01 12:00:00+00:00', ?, 'http://x/', ?, ?, ?, ?, ?, 'm', 'f', '', 'triage', '', '', ?, '', '', '')`,
			r.tool, r.host, r.port, r.addresses, r.code, r.reason, r.redirects).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	forgetMigrations(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenMigratesLegacyRefusalRows(t *testing.T) {
	path := legacyStore(t)
	for round := 1; round <= 2; round++ { // the second open finds nothing to do and changes nothing
		s, err := Open(path)
		if err != nil {
			t.Fatalf("open %d: %v", round, err)
		}
		rows, _, err := s.ListRefusals(testCtx(t), RefusalQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 5 {
			t.Fatalf("open %d: %d rows, want 5", round, len(rows))
		}
		// Newest first: the rows come back in reverse order of insertion.
		want := []struct {
			tool, kind, remedyKind, remedyValue string
			addresses, redirects                StringList
		}{
			{"fetch_url", "policy", "", "", StringList{"169.254.169.254"}, nil},
			{"proxy", "policy", "add_entry", "[fe80::1]:8443", StringList{"fe80::1%eth0"}, nil},
			{"call_integration", "network", "", "", nil, nil},
			{"take_screenshot", "policy", "change_setting", "max_bytes", StringList{"93.184.216.34"}, nil},
			{"fetch_url", "policy", "add_entry", "intranet.corp:8080", StringList{"10.0.0.5", "10.0.0.6"},
				StringList{"http://a.example/", "http://b.example/x?a=1,2"}},
		}
		for i, w := range want {
			r := rows[i]
			if r.Tool != w.tool || r.Kind != w.kind || r.RemedyKind != w.remedyKind || r.RemedyValue != w.remedyValue ||
				!reflect.DeepEqual(r.Addresses, w.addresses) || !reflect.DeepEqual(r.Redirects, w.redirects) {
				t.Errorf("open %d, row %d (%s): got tool %q kind %q remedy %q %q addresses %q redirects %q, want %+v",
					round, i, r.Reason, r.Tool, r.Kind, r.RemedyKind, r.RemedyValue, r.Addresses, r.Redirects, w)
			}
		}
	}
}

// TestOpenAddsTheProxiedColumn: a database from before refusals were
// marked proxied opens, its rows read as tool calls (not proxied), and
// new rows keep the mark.
func TestOpenAddsTheProxiedColumn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbound.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InsertRefusals(testCtx(t), []Refusal{{Tool: "take_screenshot", Host: "old.example", Reason: "internal_address"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.w.Exec("ALTER TABLE refusals DROP COLUMN proxied").Error; err != nil {
		t.Fatal(err)
	}
	forgetMigrations(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path)
	if err != nil {
		t.Fatalf("opening a database without the proxied column: %v", err)
	}
	defer s.Close()
	ctx := testCtx(t)
	if err := s.InsertRefusals(ctx, []Refusal{{Tool: "take_screenshot", Host: "new.example", Reason: "internal_address", Proxied: true}}); err != nil {
		t.Fatal(err)
	}
	rows, _, err := s.ListRefusals(ctx, RefusalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Host != "new.example" || !rows[0].Proxied || rows[1].Host != "old.example" || rows[1].Proxied {
		t.Fatalf("rows %+v, want new.example proxied and old.example not", rows)
	}
}

func TestKindFilterSelectsPolicyOrNetwork(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rows := []Refusal{
			{Tool: "fetch_url", Host: "a.example", Reason: "not_allowlisted", Kind: "policy"},
			{Tool: "fetch_url", Host: "b.example", Reason: "dns", Kind: "network"},
			{Tool: "fetch_url", Host: "c.example", Reason: "port"}, // no kind: the policy's
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		for kind, want := range map[string]string{"policy": "c.example a.example", "network": "b.example", "": "c.example b.example a.example"} {
			got, _, err := s.ListRefusals(ctx, RefusalQuery{Kind: kind})
			if err != nil {
				t.Fatal(err)
			}
			if hostsOf(got) != want {
				t.Errorf("kind %q: got %q, want %q", kind, hostsOf(got), want)
			}
		}
	})
}

func TestReviewRefusalWritesItsAuditInTheSameTransaction(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		seedSample(t, s)
		rows, _, err := s.ListRefusals(ctx, RefusalQuery{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		a := Audit{Actor: "ana", Action: "refusal.review", Target: "refusal 1", After: "expected"}
		if err := s.ReviewRefusal(ctx, rows[0].ID, StatusExpected, "probe", "ana", a); err != nil {
			t.Fatal(err)
		}
		// A review of a refusal that does not exist records nothing.
		if err := s.ReviewRefusal(ctx, 999_999, StatusExpected, "", "ana", a); err == nil {
			t.Fatal("reviewing a missing refusal succeeded")
		}
		log, _, err := s.ListAudit(ctx, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 || log[0].Action != "refusal.review" || log[0].Actor != "ana" {
			t.Fatalf("audit = %+v, want exactly the one review that happened", log)
		}
		got, _ := s.RefusalByID(ctx, rows[0].ID)
		if got.Status != StatusExpected || got.ReviewedBy != "ana" {
			t.Fatalf("refusal after review: %+v", got)
		}
	})
}
