package models

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// sumCounts is every request the refusal rows stand for, and the rows.
func sumCounts(t *testing.T, s *Store, where string, args ...any) (requests, rows int64) {
	t.Helper()
	q := s.r.Table("refusals").Select("COALESCE(SUM(repeat_count), 0), COUNT(*)")
	if where != "" {
		q = q.Where(where, args...)
	}
	if err := q.Row().Scan(&requests, &rows); err != nil {
		t.Fatal(err)
	}
	return requests, rows
}

// A flood of identical refusals becomes a handful of rows whose counts sum
// to every request, and the writer's queue never holds the flood.
func TestAggregatorMergesAFloodOfIdenticalRefusals(t *testing.T) {
	eachEngine(t, func(t *testing.T) {
		s := openTestStore(t)
		w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 10 * time.Millisecond})
		a := NewRefusalAggregator(w, 100*time.Millisecond)
		const n = 10_000
		maxQueued := 0
		start := time.Now()
		for i := range n {
			a.Write(Refusal{Tool: "proxy", Agent: "bot", Host: "evil.example", Port: 443, Code: "forbidden", Reason: "not_allowlisted",
				Kind: KindPolicy, Proxied: true, URL: fmt.Sprintf("https://evil.example/%d", i)})
			if i%100 == 0 {
				st := w.Stats()
				maxQueued = max(maxQueued, st.Queued+st.InFlight)
				time.Sleep(time.Millisecond) // spread the flood over a few windows
			}
		}
		windows := int(time.Since(start)/(100*time.Millisecond)) + 2
		if err := a.Close(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		requests, rows := sumCounts(t, s, "")
		t.Logf("%d refusals in %v: %d rows, at most %d queued", n, time.Since(start).Round(time.Millisecond), rows, maxQueued)
		if requests != n {
			t.Errorf("the rows' counts sum to %d, want %d", requests, n)
		}
		if rows > int64(2*windows) {
			t.Errorf("%d rows for %d identical refusals in %d windows; want at most two a window", rows, n, windows)
		}
		if maxQueued > 10 {
			t.Errorf("the queue held %d rows during the flood; the aggregator should keep it to a few", maxQueued)
		}
		if got, err := s.CountRefusalsSince(testCtx(t), time.Time{}); err != nil || got != n {
			t.Errorf("CountRefusalsSince = %d, %v; want the %d requests", got, err, n)
		}
		hosts, err := s.TopRefusedHosts(testCtx(t), time.Now().Add(-time.Hour), 5)
		if err != nil || len(hosts) != 1 || hosts[0].Count != n {
			t.Errorf("TopRefusedHosts = %+v, %v; want evil.example with %d", hosts, err, n)
		}
		// The first row is the first refusal itself, unmerged and at once;
		// a merged row keeps the first URL of its window and its span.
		var first, merged Refusal
		if err := s.r.Order("id").First(&first).Error; err != nil {
			t.Fatal(err)
		}
		if first.Count != 1 || first.URL != "https://evil.example/0" || first.LastTime != nil {
			t.Errorf("first row %+v; want the first refusal alone", first)
		}
		if err := s.r.Where("repeat_count > 1").Order("id").First(&merged).Error; err != nil {
			t.Fatal(err)
		}
		if merged.URL != "https://evil.example/1" || merged.LastTime == nil || merged.LastTime.Before(merged.Time) {
			t.Errorf("merged row %+v; want the window's first URL and a last time after its time", merged)
		}
	})
}

// Refusals that differ in anything a review depends on are never merged;
// the URL alone is not such a thing (documented).
func TestAggregatorKeepsDifferentRefusalsApart(t *testing.T) {
	s := openTestStore(t)
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: time.Hour})
	a := NewRefusalAggregator(w, time.Hour) // only Close ends the window
	base := Refusal{Tool: "fetch_url", Agent: "bot", Ticket: "T-1", Host: "a.example", Port: 443, Code: "forbidden", Reason: "not_allowlisted", Kind: KindPolicy}
	variants := []func(r *Refusal){
		func(*Refusal) {},
		func(r *Refusal) { r.Host = "b.example" },
		func(r *Refusal) { r.Port = 8443 },
		func(r *Refusal) { r.Agent = "other" },
		func(r *Refusal) { r.Tool = "proxy" },
		func(r *Refusal) { r.Ticket = "T-2" },
		func(r *Refusal) { r.Thread = "th" },
		func(r *Refusal) { r.Code = "unreachable" },
		func(r *Refusal) { r.Reason = "private" },
		func(r *Refusal) { r.Kind = "network" },
		func(r *Refusal) { r.Proxied = true },
	}
	const repeats = 5
	for i := range repeats {
		for _, v := range variants {
			r := base
			r.URL = fmt.Sprintf("https://%s/%d", r.Host, i)
			v(&r)
			a.Write(r)
		}
	}
	if err := a.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	requests, rows := sumCounts(t, s, "")
	if requests != int64(repeats*len(variants)) || rows != int64(2*len(variants)) {
		t.Errorf("%d requests in %d rows; want %d in %d (each kind: its first, then one merged row)", requests, rows, repeats*len(variants), 2*len(variants))
	}
	var perKind []int64
	if err := s.r.Table("refusals").Where("repeat_count > 1").Pluck("repeat_count", &perKind).Error; err != nil {
		t.Fatal(err)
	}
	for _, c := range perKind {
		if c != repeats-1 {
			t.Errorf("a merged row counts %d, want %d: kinds were mixed", c, repeats-1)
		}
	}
}

// Past AggregateMaxKinds kinds in a window, new kinds go straight to the
// writer: memory stays bounded and nothing is lost.
func TestAggregatorMemoryIsBounded(t *testing.T) {
	s := openTestStore(t)
	w := NewRefusalWriter(s, RefusalWriterOptions{FlushInterval: 10 * time.Millisecond})
	a := NewRefusalAggregator(w, time.Hour)
	const kinds = AggregateMaxKinds + 500
	for round := range 2 {
		for i := range kinds {
			a.Write(Refusal{Tool: "proxy", Host: fmt.Sprintf("h%d.example", i), URL: fmt.Sprint(round)})
		}
	}
	a.mu.Lock()
	tracked := len(a.seen)
	a.mu.Unlock()
	if tracked > AggregateMaxKinds {
		t.Errorf("%d kinds tracked, want at most %d", tracked, AggregateMaxKinds)
	}
	if err := a.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if requests, _ := sumCounts(t, s, ""); requests != 2*kinds {
		t.Errorf("%d requests stored, want %d", requests, 2*kinds)
	}
}

// discardSink takes batches and keeps nothing: the aggregator's own cost.
func discardSink(context.Context, []Refusal) error { return nil }

// BenchmarkRefusalAggregator is the aggregator's cost per refusal: a flood
// of one kind (merged), and refusals of ever new kinds (passed on to the
// writer, whose queue is part of the cost).
func BenchmarkRefusalAggregator(b *testing.B) {
	for _, bc := range []struct {
		name   string
		host   func(i int) string
		direct bool // the writer alone, for comparison
	}{
		{"flood of one kind", func(int) string { return "evil.example" }, false},
		{"flood of one kind, writer alone", func(int) string { return "evil.example" }, true},
		{"distinct hosts", func(i int) string { return fmt.Sprintf("h%d.example", i) }, false},
		{"distinct hosts, writer alone", func(i int) string { return fmt.Sprintf("h%d.example", i) }, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			w := newBatchWriter(discardSink, RefusalWriterOptions{FlushInterval: time.Millisecond})
			var a interface {
				Write(Refusal) bool
				Close(context.Context) error
			} = NewRefusalAggregator(w, AggregateWindow)
			if bc.direct {
				a = w
			}
			r := Refusal{Tool: "proxy", Agent: "bot", Port: 443, Code: "forbidden", Reason: "not_allowlisted", Kind: KindPolicy, Proxied: true,
				URL: "https://evil.example/some/path?q=1", Message: "evil.example is not on the allowlist."}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				r.Host = bc.host(i % 100_000)
				a.Write(r)
			}
			b.StopTimer()
			_ = a.Close(context.Background())
		})
	}
}
