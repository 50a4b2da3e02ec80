package guard

import (
	"testing"
	"time"
)

func TestWrongCredentialsAreLoggedOncePerMinutePerClient(t *testing.T) {
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
	if ok, _ := l.admit("10.0.0.2:5000", t0.Add(time.Second)); !ok {
		t.Fatal("another client's first attempt must be logged")
	}
	ok, left := l.admit("10.0.0.1:5002", t0.Add(61*time.Second))
	if !ok || left != 30 {
		t.Fatalf("after the window: logged %v, %d left out, want true and 30", ok, left)
	}
}
