package web

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestSourceKeyGroupsIPv6By64AndKeepsIPv4Whole(t *testing.T) {
	for _, tc := range []struct{ ip, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
	} {
		if got := sourceKey(tc.ip); got != tc.want {
			t.Errorf("sourceKey(%q) = %q, want %q", tc.ip, got, tc.want)
		}
	}
	if sourceKey("192.0.2.7") == sourceKey("192.0.2.8") {
		t.Error("two IPv4 addresses share a source")
	}
}

func TestAccountKeyNormalisesTheName(t *testing.T) {
	if accountKey(" Ada ") != accountKey("ada") {
		t.Errorf("%q and %q are one account", " Ada ", "ada")
	}
	long := accountKey(fmt.Sprintf("%0200d", 7))
	if len(long) > 65 {
		t.Errorf("a 200-character name is kept whole as a key (%d bytes)", len(long))
	}
}

func TestThrottleBackoffDoublesUpToItsCap(t *testing.T) {
	p := throttlePolicy{free: 5, base: time.Minute, max: time.Hour}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	for extra, w := range want {
		if got := p.backoff(extra); got != w {
			t.Errorf("backoff(%d) = %s, want %s", extra, got, w)
		}
	}
	if got := p.backoff(1 << 20); got != time.Hour {
		t.Errorf("a huge count waits %s, want the cap", got)
	}
}

// TestThrottleTableForgetsTheLeastRecentlyUsedKeyWhenFull: memory is
// bounded, and the key dropped is the one not used for longest.
func TestThrottleTableForgetsTheLeastRecentlyUsedKeyWhenFull(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tb := newThrottleTable(throttlePolicy{free: 1, base: time.Minute, max: time.Minute, window: time.Hour}, 3)
	for _, k := range []string{"a", "b", "c"} {
		tb.add(k, now)
	}
	tb.wait("a", now) // a is used again; b is now the least recent
	tb.add("d", now)
	if len(tb.keys) != 3 || tb.lru.Len() != 3 {
		t.Fatalf("the table holds %d keys (list %d), want its limit 3", len(tb.keys), tb.lru.Len())
	}
	if _, ok := tb.keys["b"]; ok {
		t.Fatal("the least recently used key b was kept")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := tb.keys[k]; !ok {
			t.Fatalf("key %s was forgotten", k)
		}
	}
	// Many failures of one key keep only a bounded list of times.
	for i := 0; i < 1000; i++ {
		tb.add("a", now)
	}
	if n := len(tb.keys["a"].Value.(*throttleEntry).failures); n > 1+keptFailures {
		t.Fatalf("one key keeps %d failure times", n)
	}
}

// TestThrottleFailuresLeaveTheWindow: a failure older than the window no
// longer counts, and its key is dropped.
func TestThrottleFailuresLeaveTheWindow(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tb := newThrottleTable(throttlePolicy{free: 1, base: time.Hour, max: time.Hour, window: time.Minute}, 10)
	tb.add("a", now)
	if w := tb.wait("a", now); w != time.Hour {
		t.Fatalf("wait right after the free failure: %s", w)
	}
	if w := tb.wait("a", now.Add(time.Minute)); w != 0 {
		t.Fatalf("wait once the failure left the window: %s", w)
	}
	if len(tb.keys) != 0 {
		t.Fatal("an empty key is kept")
	}
}

// TestReservedAttemptIsCreditedOnSuccess: a correct sign-in does not use
// up the account's or the source's budget.
func TestReservedAttemptIsCreditedOnSuccess(t *testing.T) {
	clock := newTestClock()
	th := newLoginThrottle(clock.now, nil)
	for i := 0; i < 100; i++ {
		a, locked, _ := th.reserve(context.Background(), "ada", "192.0.2.7")
		if locked != nil {
			t.Fatalf("sign-in %d was refused although every earlier one succeeded: %+v", i, locked)
		}
		a.credit(context.Background())
	}
	if len(th.accounts.keys) != 0 || len(th.sources.keys) != 0 {
		t.Fatalf("credited attempts left keys behind: %d accounts, %d sources", len(th.accounts.keys), len(th.sources.keys))
	}
	for i := 0; i < accountThrottle.free; i++ {
		if _, locked, _ := th.reserve(context.Background(), "ada", "192.0.2.7"); locked != nil {
			t.Fatalf("failure %d refused", i)
		}
	}
	if _, locked, _ := th.reserve(context.Background(), "ada", "192.0.2.7"); locked == nil || !locked.Account || locked.Wait != accountThrottle.base {
		t.Fatalf("after %d failures: %+v, want the account's lock of %s", accountThrottle.free, locked, accountThrottle.base)
	}
}
