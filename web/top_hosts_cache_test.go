package web

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/testwait"
	"github.com/outboundhq/outbound/models"
)

func TestTopHostsAreRankedAgainOnlyWhenTheCountMovedAndTheListAged(t *testing.T) {
	var c topHostsCache
	ctx := context.Background()
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	t0 := day.Add(10 * time.Hour)
	ranks := 0
	rank := func(name string) func(context.Context) ([]models.HostCount, error) {
		return func(context.Context) ([]models.HostCount, error) {
			ranks++
			return []models.HostCount{{Host: name, Count: 1}}, nil
		}
	}
	steps := []struct {
		what  string
		day   time.Time
		n     int
		count int64
		at    time.Time
		want  string
	}{
		{"the first load ranks", day, 6, 10, t0, "a"},
		{"a quiet log keeps the list however old", day, 6, 10, t0.Add(time.Hour), "a"},
		{"new refusals within the TTL keep it", day, 6, 11, t0.Add(topHostsTTL - time.Millisecond), "a"},
		{"new refusals after the TTL rank again", day, 6, 11, t0.Add(topHostsTTL), "b"},
		{"another length ranks again", day, 3, 11, t0.Add(topHostsTTL), "c"},
		{"a new day ranks again", day.Add(24 * time.Hour), 3, 11, t0.Add(topHostsTTL), "d"},
	}
	wantRanks := 0
	for i, st := range steps {
		name := string(rune('a' + wantRanks))
		got, err := c.get(ctx, st.day, st.n, st.count, st.at, rank(name))
		if err != nil {
			t.Fatal(err)
		}
		if st.want == name {
			wantRanks++
		}
		if len(got) != 1 || got[0].Host != st.want || ranks != wantRanks {
			t.Errorf("step %d (%s): got %v after %d rankings; want %q after %d", i, st.what, got, ranks, st.want, wantRanks)
		}
	}
}

// An empty list next to refusals today tells the log page none of them
// named a host, so it is not kept once the count moves, even within the
// TTL: a list ranked before the first refusals (or with only refusals
// of no host) would have said so of hosts refused since.
func TestAnEmptyTopHostsListIsRankedAgainWhenTheCountMoves(t *testing.T) {
	var c topHostsCache
	ctx := context.Background()
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	t0 := day.Add(10 * time.Hour)
	var hosts []models.HostCount
	ranks := 0
	rank := func(context.Context) ([]models.HostCount, error) {
		ranks++
		return hosts, nil
	}
	steps := []struct {
		what  string
		count int64
		at    time.Time
		hosts []models.HostCount // what a ranking finds
		want  int                // hosts got
		ranks int                // rankings so far
	}{
		{"no refusals yet", 0, t0, nil, 0, 1},
		{"the count stands: kept", 0, t0.Add(time.Second), nil, 0, 1},
		{"refusals of no host: ranked again", 2, t0.Add(2 * time.Second), nil, 0, 2},
		{"the count stands: kept", 2, t0.Add(3 * time.Second), nil, 0, 2},
		{"a refused host within the TTL: ranked again", 3, t0.Add(4 * time.Second), []models.HostCount{{Host: "a.example", Count: 1}}, 1, 3},
		{"a listed host is kept within the TTL", 4, t0.Add(5 * time.Second), []models.HostCount{{Host: "a.example", Count: 2}}, 1, 3},
	}
	for i, st := range steps {
		hosts = st.hosts
		got, err := c.get(ctx, day, 5, st.count, st.at, rank)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != st.want || ranks != st.ranks {
			t.Errorf("step %d (%s): got %v after %d rankings; want %d hosts after %d", i, st.what, got, ranks, st.want, st.ranks)
		}
	}
}

func TestAFailedRankingIsNotKept(t *testing.T) {
	var c topHostsCache
	ctx := context.Background()
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	broken := errors.New("database gone")
	if _, err := c.get(ctx, day, 6, 5, day, func(context.Context) ([]models.HostCount, error) { return nil, broken }); !errors.Is(err, broken) {
		t.Fatalf("err = %v; want the ranking's error", err)
	}
	calls := 0
	got, err := c.get(ctx, day, 6, 5, day, func(context.Context) ([]models.HostCount, error) {
		calls++
		return []models.HostCount{}, nil
	})
	if err != nil || calls != 1 || got == nil {
		t.Fatalf("after a failure: %v, %v, %d rankings; want an empty list from one new ranking", got, err, calls)
	}
}

func TestLoadsThatFindTheListStaleTogetherShareOneRanking(t *testing.T) {
	var c topHostsCache
	ctx := context.Background()
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	release := make(chan struct{})
	var started, calls atomic.Int32
	rank := func(context.Context) ([]models.HostCount, error) {
		calls.Add(1)
		started.Add(1)
		<-release
		return []models.HostCount{{Host: "x", Count: 3}}, nil
	}
	var wg sync.WaitGroup
	results := make([][]models.HostCount, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = c.get(ctx, day, 6, 3, day, rank)
		}()
	}
	for started.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the others reach the wait
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("%d rankings for 8 loads at once; want 1", n)
	}
	for i, r := range results {
		if len(r) != 1 || r[0].Host != "x" {
			t.Errorf("load %d got %v", i, r)
		}
	}

	// A load that gives up waiting says why and leaves the ranking alone.
	c2 := topHostsCache{}
	block := make(chan struct{})
	go c2.get(ctx, day, 6, 3, day, func(context.Context) ([]models.HostCount, error) { <-block; return nil, nil })
	for {
		c2.kept.mu.Lock()
		busy := c2.kept.reading != nil
		c2.kept.mu.Unlock()
		if busy {
			break
		}
		time.Sleep(time.Millisecond)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c2.get(gone, day, 6, 3, day, rank); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait returned %v; want context.Canceled", err)
	}
	close(block)
}

// The filter menus are read again when today's count moved and the kept
// ones are keptTTL old, and in any case once they are facetsMaxAge old:
// a purge that removes a value's last row does not move today's count.
func TestFacetsAreReadAgainWhenTheCountMovedOrTheyAreOld(t *testing.T) {
	var c facetsCache
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	reads := 0
	read := func(context.Context) (models.RefusalFacets, error) {
		reads++
		return models.RefusalFacets{Agents: []string{string(rune('a' + reads - 1))}}, nil
	}
	steps := []struct {
		what  string
		count int64
		at    time.Time
		want  string
	}{
		{"the first load reads", 10, t0, "a"},
		{"a quiet log keeps them", 10, t0.Add(facetsMaxAge - time.Millisecond), "a"},
		{"a quiet log reads again at the bound", 10, t0.Add(facetsMaxAge), "b"},
		{"new refusals within the TTL keep them", 11, t0.Add(facetsMaxAge + keptTTL - time.Millisecond), "b"},
		{"new refusals after the TTL read again", 11, t0.Add(facetsMaxAge + keptTTL), "c"},
	}
	for i, st := range steps {
		got, err := c.get(ctx, st.count, st.at, read)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Agents) != 1 || got.Agents[0] != st.want {
			t.Errorf("step %d (%s): got %v after %d reads; want %q", i, st.what, got.Agents, reads, st.want)
		}
	}
	if reads != 3 {
		t.Errorf("%d reads; want 3", reads)
	}
	broken := errors.New("database down")
	if _, err := c.get(ctx, 12, t0.Add(time.Hour), func(context.Context) (models.RefusalFacets, error) { return models.RefusalFacets{}, broken }); !errors.Is(err, broken) {
		t.Fatalf("a failed read returned %v", err)
	}
	if got, _ := c.get(ctx, 12, t0.Add(time.Hour), read); len(got.Agents) != 1 || got.Agents[0] != "d" {
		t.Fatalf("after a failed read the next load got %v; want a fresh read, the failure not kept", got.Agents)
	}
}

// Found in review: a clock that went back made a kept value look young
// for as long as it had gone back; a read that panicked held every later
// load; the loads waiting on a failed read each read again in turn.
func TestKeptValuesSurviveClocksPanicsAndFailures(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	reads := 0
	read := func(context.Context) (int, error) { reads++; return reads, nil }

	var c countKept[int, int]
	c.get(ctx, 0, 1, t0, 0, nil, read)
	if v, _ := c.get(ctx, 0, 2, t0.Add(-time.Hour), 0, nil, read); v != 2 {
		t.Errorf("with the clock an hour back and the count moved, got read %d; want a new read", v)
	}

	var p countKept[int, int]
	func() {
		defer func() { _ = recover() }()
		p.get(ctx, 0, 1, t0, 0, nil, func(context.Context) (int, error) { panic("bug") })
	}()
	done := make(chan int, 1)
	go func() { v, _ := p.get(ctx, 0, 1, t0, 0, nil, read); done <- v }()
	select {
	case v := <-done:
		if v != 3 {
			t.Errorf("after a panicking read got %d; want a fresh read", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a load after a panicking read waited for it for ever")
	}

	var f countKept[int, int]
	broken := errors.New("database down")
	release := make(chan struct{})
	var failing atomic.Int32
	failed := func(context.Context) (int, error) { failing.Add(1); <-release; return 0, broken }
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { _, errs[i] = f.get(ctx, 0, 1, t0, 0, nil, failed) })
	}
	testwait.Until(t, "every other load waits on the failing read", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.reading != nil && f.reading.waiters == len(errs)-1
	})
	close(release)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, broken) {
			t.Errorf("load %d: %v; want the failed read's error", i, err)
		}
	}
	if n := failing.Load(); n != 1 {
		t.Errorf("6 loads during a failing read read %d times; want once", n)
	}
}
