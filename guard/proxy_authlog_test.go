package guard

import (
	"fmt"
	"testing"
	"time"
)

func TestWrongCredentialsAreLoggedSparingly(t *testing.T) {
	l := authLog{window: time.Minute}
	t0 := time.Now()
	if ok, _ := l.admit("10.0.0.1:5000", t0); !ok {
		t.Fatal("the first attempt must be logged")
	}
	for i := 1; i <= 30; i++ {
		if ok, _ := l.admit("10.0.0.1:5001", t0.Add(time.Duration(i)*time.Second)); ok {
			t.Fatalf("attempt %d within the minute was logged", i)
		}
	}
	// Another source address in the same loopback /8 is the same client.
	// Each logged row carries the count left out since the row before.
	if ok, left := l.admit("127.0.0.1:1", t0); !ok || left != 30 {
		t.Fatalf("the first loopback attempt: logged %v carrying %d, want true and 30", ok, left)
	}
	if ok, _ := l.admit("127.9.8.7:1", t0.Add(time.Second)); ok {
		t.Fatal("a different loopback address escaped the per-network limit")
	}
	// Many networks: at most authLogPerWindow rows a minute in all.
	logged := 2
	for i := 0; i < 100; i++ {
		ok, left := l.admit(fmt.Sprintf("[2001:db8:%x::1]:1", i), t0.Add(2*time.Second))
		if ok && i == 0 && left != 1 {
			t.Fatalf("the first IPv6 row carries %d left out, want the 1 loopback attempt", left)
		}
		if ok {
			logged++
		}
	}
	if logged != authLogPerWindow {
		t.Fatalf("%d rows logged in one minute, want %d", logged, authLogPerWindow)
	}
	ok, left := l.admit("10.0.0.1:5002", t0.Add(61*time.Second))
	if !ok || left != 100-(authLogPerWindow-2) {
		t.Fatalf("after the window: logged %v, %d left out", ok, left)
	}
}
