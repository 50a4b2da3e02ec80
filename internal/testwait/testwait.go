// Package testwait is for tests that must line goroutines up before they
// go on: waiting for a state another goroutine reaches, by polling, since
// the code under test offers no signal for it (and should not, for a
// test's sake).
package testwait

import (
	"testing"
	"time"
)

// Until polls cond every millisecond until it holds, and fails t, naming
// what it waited for, if it does not within 5 seconds.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 5 s waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
