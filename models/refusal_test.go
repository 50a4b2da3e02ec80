package models

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// sampleRefusals is a small, hand-made log: row i has Time t0+i minutes.
func sampleRefusals() []Refusal {
	return []Refusal{
		{Tool: "fetch_url", Host: "metadata.google.internal", Port: 80, Code: "blocked_address", Reason: "link_local", Agent: "triage", URL: "http://metadata.google.internal/"},
		{Tool: "take_screenshot", Host: "status.example.com", Port: 443, Code: "not_allowlisted", Reason: "private", Agent: "triage", Addresses: StringList{"10.0.0.5", "10.0.0.6"}},
		{Tool: "fetch_url", Host: "a_b.example.com", Port: 443, Code: "not_allowlisted", Reason: "private", Agent: "billing"},
		{Tool: "call_integration", Host: "axb.example.com", Port: 8443, Code: "bad_port", Reason: "port", Agent: "billing",
			Redirects: StringList{"https://x.example/", "https://axb.example.com:8443/"}},
		{Tool: "proxy", Host: "STATUS.example.com.evil.net", Port: 443, Code: "blocked_address", Reason: "loopback", Agent: "triage"},
	}
}

func seedSample(t *testing.T, s *Store) []Refusal {
	t.Helper()
	rows := sampleRefusals()
	for i := range rows {
		rows[i].Time = t0.Add(time.Duration(i) * time.Minute)
	}
	if err := s.InsertRefusals(testCtx(t), rows); err != nil {
		t.Fatalf("InsertRefusals: %v", err)
	}
	return rows
}

func hostsOf(rows []Refusal) string {
	var hs []string
	for _, r := range rows {
		hs = append(hs, r.Host)
	}
	return strings.Join(hs, " ")
}

func TestInsertAndRefusalByID(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		local := time.FixedZone("UTC+2", 2*3600)
		in := Refusal{ID: 999, Time: t0.In(local), Tool: "check", Host: "h.example", Port: 8080, Addresses: StringList{"192.0.2.1"},
			Code: "c", Reason: "r", Message: "m", Fix: "f", Entry: "e", Agent: "a", Thread: "th", Trigger: "email 42",
			Redirects: StringList{"u1", "u2"}}
		if err := s.InsertRefusals(ctx, []Refusal{in}); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertRefusals(ctx, nil); err != nil {
			t.Errorf("inserting nothing: %v", err)
		}
		list, _, err := s.ListRefusals(ctx, RefusalQuery{})
		if err != nil || len(list) != 1 {
			t.Fatalf("ListRefusals = %d rows, %v; want 1", len(list), err)
		}
		if list[0].ID == 999 {
			t.Error("caller-supplied ID was kept; IDs must come from the database")
		}
		got, err := s.RefusalByID(ctx, list[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		want := in
		want.ID, want.Time, want.Kind = got.ID, t0, KindPolicy // a row without a kind is the policy's
		want.Count = 1                                         // and a row stands for one refusal unless it says more
		if got.Time.Location() != time.UTC || !got.Time.Equal(t0) {
			t.Errorf("Time = %v, want %v stored in UTC", got.Time, t0)
		}
		got.Time = t0
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
		}
		_, err = s.RefusalByID(ctx, 12345)
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.Value != "12345" {
			t.Errorf("RefusalByID(missing) = %v, want *NotFoundError naming 12345", err)
		}
	})
}

func TestInsertStampsZeroTime(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		before := time.Now().UTC().Add(-time.Second)
		if err := s.InsertRefusals(testCtx(t), []Refusal{{Host: "x"}}); err != nil {
			t.Fatal(err)
		}
		rows, _, _ := s.ListRefusals(testCtx(t), RefusalQuery{})
		if len(rows) != 1 || rows[0].Time.Before(before) {
			t.Fatalf("zero Time was not stamped with now: %+v", rows)
		}
	})
}

func TestListRefusalsFilters(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		seedSample(t, s)
		if err := s.ReviewRefusal(testCtx(t), 2, StatusNeedsAccess, "add it", "ana"); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			q    RefusalQuery
			want string // hosts, newest first
		}{
			{"none", RefusalQuery{}, "status.example.com.evil.net axb.example.com a_b.example.com status.example.com metadata.google.internal"},
			{"code", RefusalQuery{Code: "not_allowlisted"}, "a_b.example.com status.example.com"},
			{"reason", RefusalQuery{Reason: "loopback"}, "status.example.com.evil.net"},
			{"tool", RefusalQuery{Tool: "fetch_url"}, "a_b.example.com metadata.google.internal"},
			{"agent", RefusalQuery{Agent: "billing"}, "axb.example.com a_b.example.com"},
			{"host substring ignores case", RefusalQuery{Host: "Status.Example"}, "status.example.com.evil.net status.example.com"},
			{"host exact", RefusalQuery{Host: "status.example.com", HostExact: true}, "status.example.com"},
			{"host underscore is literal", RefusalQuery{Host: "a_b"}, "a_b.example.com"},
			{"host percent is literal", RefusalQuery{Host: "%"}, ""},
			{"status", RefusalQuery{Status: StatusNeedsAccess}, "status.example.com"},
			{"unreviewed", RefusalQuery{Unreviewed: true}, "status.example.com.evil.net axb.example.com a_b.example.com metadata.google.internal"},
			{"since inclusive", RefusalQuery{Since: t0.Add(3 * time.Minute)}, "status.example.com.evil.net axb.example.com"},
			{"until exclusive", RefusalQuery{Until: t0.Add(1 * time.Minute)}, "metadata.google.internal"},
			{"since in another zone", RefusalQuery{Since: t0.Add(4 * time.Minute).In(time.FixedZone("X", -5*3600))}, "status.example.com.evil.net"},
			{"combined", RefusalQuery{Code: "blocked_address", Agent: "triage", Host: "google"}, "metadata.google.internal"},
			{"before id", RefusalQuery{BeforeID: 3}, "status.example.com metadata.google.internal"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rows, next, err := s.ListRefusals(testCtx(t), tt.q)
				if err != nil {
					t.Fatal(err)
				}
				if got := hostsOf(rows); got != tt.want {
					t.Errorf("hosts = %q, want %q", got, tt.want)
				}
				if next != 0 {
					t.Errorf("next = %d, want 0 on a short last page", next)
				}
			})
		}
	})
}

func TestListRefusalsRejectsBadQueries(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		tests := []struct {
			name string
			q    RefusalQuery
			want string
		}{
			{"negative limit", RefusalQuery{Limit: -1}, "-1 is out of range"},
			{"limit too big", RefusalQuery{Limit: 501}, "use 1 to 500"},
			{"negative cursor", RefusalQuery{BeforeID: -3}, "cursor -3"},
			{"unknown status", RefusalQuery{Status: "done"}, `"done" is not one of`},
			{"status and unreviewed", RefusalQuery{Status: StatusExpected, Unreviewed: true}, "choose one"},
			{"empty time range", RefusalQuery{Since: t0, Until: t0}, "time range is empty"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := s.ListRefusals(testCtx(t), tt.q)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want it to mention %q", err, tt.want)
				}
			})
		}
	})
}

func TestReviewRefusal(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		seedSample(t, s)
		if err := s.ReviewRefusal(ctx, 1, StatusExpected, "metadata probe, fine", "ana"); err != nil {
			t.Fatal(err)
		}
		r, _ := s.RefusalByID(ctx, 1)
		if r.Status != StatusExpected || r.Comment != "metadata probe, fine" || r.ReviewedBy != "ana" || r.ReviewedAt == nil {
			t.Errorf("after review: %+v", r)
		}
		if err := s.ReviewRefusal(ctx, 1, StatusUnreviewed, "reopened", "bo"); err != nil {
			t.Fatal(err)
		}
		r, _ = s.RefusalByID(ctx, 1)
		if r.Status != StatusUnreviewed || r.Comment != "reopened" || r.ReviewedBy != "" || r.ReviewedAt != nil {
			t.Errorf("after reopening: %+v", r)
		}

		tests := []struct {
			name   string
			id     int64
			status ReviewStatus
			is     error
		}{
			{"bad status", 1, "approved", nil},
			{"missing row", 777, StatusReviewed, ErrNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := s.ReviewRefusal(ctx, tt.id, tt.status, "", "ana")
				if err == nil {
					t.Fatal("want an error")
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("err = %v, want %v", err, tt.is)
				}
			})
		}
	})
}

func TestCountAndTopHosts(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		var rows []Refusal
		add := func(host string, n int, at time.Time) {
			for range n {
				rows = append(rows, Refusal{Host: host, Time: at})
			}
		}
		add("old.example", 10, t0.Add(-time.Hour))
		add("b.example", 3, t0)
		add("a.example", 3, t0.Add(time.Minute))
		add("c.example", 5, t0.Add(2*time.Minute))
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if n, err := s.CountRefusalsSince(ctx, t0); err != nil || n != 11 {
			t.Errorf("CountRefusalsSince = %d, %v; want 11", n, err)
		}
		top, err := s.TopRefusedHosts(ctx, t0, 2)
		if err != nil {
			t.Fatal(err)
		}
		want := []HostCount{{"c.example", 5}, {"a.example", 3}}
		if len(top) != 2 || top[0] != want[0] || top[1] != want[1] {
			t.Errorf("TopRefusedHosts = %+v, want %+v (ties broken by name)", top, want)
		}
		for _, n := range []int{0, -1, 501} {
			if _, err := s.TopRefusedHosts(ctx, t0, n); err == nil {
				t.Errorf("TopRefusedHosts(n=%d) succeeded, want a range error", n)
			}
		}
	})
}

func TestPurgeRefusalsBefore(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		// More than two chunks of old rows, so the chunk loop must go round.
		old := make([]Refusal, 2*purgeChunk+17)
		for i := range old {
			old[i] = Refusal{Host: "old", Time: t0.Add(-time.Duration(i+1) * time.Second)}
		}
		fresh := []Refusal{{Host: "new", Time: t0}, {Host: "new", Time: t0.Add(time.Hour)}}
		if err := s.InsertRefusals(ctx, append(old, fresh...)); err != nil {
			t.Fatal(err)
		}
		n, err := s.PurgeRefusalsBefore(ctx, t0)
		if err != nil || n != int64(len(old)) {
			t.Fatalf("PurgeRefusalsBefore = %d, %v; want %d", n, err, len(old))
		}
		if left := countRefusals(t, s); left != 2 {
			t.Errorf("%d rows left, want the 2 at or after the cutoff", left)
		}
		if n, err := s.PurgeRefusalsBefore(ctx, t0); err != nil || n != 0 {
			t.Errorf("second purge = %d, %v; want 0", n, err)
		}

		cancelled, cancel := contextWithCancel(t)
		cancel()
		if _, err := s.PurgeRefusalsBefore(cancelled, t0.Add(2*time.Hour)); err == nil {
			t.Error("purge with a cancelled context succeeded")
		}
		if left := countRefusals(t, s); left != 2 {
			t.Errorf("cancelled purge deleted rows: %d left", left)
		}
	})
}

func TestEachRefusal(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		ctx := testCtx(t)
		rows := make([]Refusal, 1234)
		for i := range rows {
			code := "even"
			if i%2 == 1 {
				code = "odd"
			}
			rows[i] = Refusal{Host: "h", Code: code, Time: t0}
		}
		if err := s.InsertRefusals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		var seen []int64
		err := s.EachRefusal(ctx, RefusalQuery{Code: "odd", Limit: 3}, func(r *Refusal) error {
			if r.Code != "odd" {
				t.Errorf("row %d has code %q, filter ignored", r.ID, r.Code)
			}
			seen = append(seen, r.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 617 {
			t.Errorf("visited %d rows, want 617 (Limit must be ignored)", len(seen))
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] >= seen[i-1] {
				t.Fatalf("not newest first at %d: %d after %d", i, seen[i], seen[i-1])
			}
		}

		visited := 0
		err = s.EachRefusal(ctx, RefusalQuery{}, func(*Refusal) error {
			visited++
			if visited == 10 {
				return ErrStopIteration
			}
			return nil
		})
		if err != nil || visited != 10 {
			t.Errorf("stop early: visited %d, err %v; want 10, nil", visited, err)
		}
		boom := errors.New("disk full")
		if err := s.EachRefusal(ctx, RefusalQuery{}, func(*Refusal) error { return boom }); !errors.Is(err, boom) {
			t.Errorf("callback error not returned: %v", err)
		}
		if err := s.EachRefusal(ctx, RefusalQuery{Limit: -5, Status: "nope"}, func(*Refusal) error { return nil }); err == nil {
			t.Error("bad filter was not reported")
		}
	})
}
