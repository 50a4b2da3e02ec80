package web

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// dummyHashesAtStart is how many dummy hashes existed once every init of
// the package had run, before any test: TestMain reads it.
var dummyHashesAtStart int32

func TestMain(m *testing.M) {
	dummyHashesAtStart = dummyHashesMade.Load()
	os.Exit(m.Run())
}

// TestPackageInitHashesNoPassword: loading the package (every `console`
// command does, `console help` included) runs no bcrypt.
func TestPackageInitHashesNoPassword(t *testing.T) {
	if dummyHashesAtStart != 0 {
		t.Fatalf("package init made %d dummy bcrypt hashes, want 0: make it on first use", dummyHashesAtStart)
	}
}

// TestUnknownNameSignInStillComparesAHash: a sign-in for a name that does
// not exist pays one bcrypt compare, against the dummy hash, like a wrong
// password for a real name, so the timing does not tell which names exist.
func TestUnknownNameSignInStillComparesAHash(t *testing.T) {
	var mu sync.Mutex
	var compared [][]byte
	real := comparePassword
	// The hook is set before the server starts and put back after it
	// stops (cleanups run last-registered first).
	comparePassword = func(hash, pw []byte) error {
		mu.Lock()
		compared = append(compared, hash)
		mu.Unlock()
		return real(hash, pw)
	}
	t.Cleanup(func() { comparePassword = real })
	h := newHarness(t)
	h.addUser("ada", models.RoleAdmin)
	ada, err := h.store.UserByName(t.Context(), "ada")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		label, name string
		wantHash    []byte
	}{
		{"unknown name", "nobody", dummyHash()},
		{"wrong password", "ada", []byte(ada.PasswordHash)},
	} {
		mu.Lock()
		compared = nil
		mu.Unlock()
		p := h.browser().post("/login", url.Values{"name": {tc.name}, "password": {"not the password"}})
		if p.status != http.StatusUnauthorized {
			t.Fatalf("%s: status %d, want 401", tc.label, p.status)
		}
		mu.Lock()
		got := compared
		mu.Unlock()
		if len(got) != 1 || !bytes.Equal(got[0], tc.wantHash) {
			t.Fatalf("%s: compared %d hashes (%q), want exactly one against %q", tc.label, len(got), got, tc.wantHash)
		}
	}
	if n := dummyHashesMade.Load(); n != 1 {
		t.Fatalf("the dummy hash was made %d times, want once", n)
	}
}
