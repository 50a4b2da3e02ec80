package web

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
		c2.mu.Lock()
		busy := c2.ranking != nil
		c2.mu.Unlock()
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
