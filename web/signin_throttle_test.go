package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

// The limits these tests hold the throttle to: strict per account,
// generous per source address (an IPv4 address or an IPv6 /64).
var (
	wantAccountChecks = accountThrottle.free // 5
	wantSourceChecks  = sourceThrottle.free  // 20
)

// testClock is a clock a test moves by hand; the server reads it from
// many goroutines.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock {
	return &testClock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// signInDesk posts sign-in forms straight to the console's handler, so a
// test chooses each request's client address and may send many at once.
// It holds what a browser that loaded the sign-in page holds: its cookies
// and the form's CSRF token.
type signInDesk struct {
	t        *testing.T
	h        *harness
	handler  http.Handler
	cookies  []*http.Cookie
	token    string
	compares *atomic.Int32
}

// countPasswordChecks counts every password check run from now until the
// test ends (the comparePassword hook). Call it before starting the
// servers: the hook is put back after they stop (cleanups run
// last-registered first).
func countPasswordChecks(t *testing.T) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	real := comparePassword
	comparePassword = func(hash, pw []byte) error {
		n.Add(1)
		return real(hash, pw)
	}
	t.Cleanup(func() { comparePassword = real })
	return &n
}

// newSignInDesk starts a console whose clock is clock and counts every
// password check it runs.
func newSignInDesk(t *testing.T, clock *testClock) *signInDesk {
	t.Helper()
	desk := &signInDesk{t: t, compares: countPasswordChecks(t)}
	desk.h = newHarnessWith(t, func(d *Deps) { d.Now = clock.now })
	desk.handler = desk.h.srv.Config.Handler
	rec := httptest.NewRecorder()
	desk.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, desk.h.srv.URL+"/login", nil))
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	tok, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok {
		t.Fatalf("the sign-in page has no CSRF token (status %d)", rec.Code)
	}
	desk.token, desk.cookies = tok, rec.Result().Cookies()
	return desk
}

// signIn posts the sign-in form from the client address addr ("ip:port").
// It is safe to call from many goroutines.
func (d *signInDesk) signIn(addr, name, password string) *httptest.ResponseRecorder {
	form := url.Values{"_csrf": {d.token}, "name": {name}, "password": {password}}
	req := httptest.NewRequest(http.MethodPost, d.h.srv.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = addr
	for _, c := range d.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	d.handler.ServeHTTP(rec, req)
	return rec
}

// wantStatus fails the test unless rec answered status.
func wantStatus(t *testing.T, label string, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("%s: status %d, want %d (Retry-After %q)", label, rec.Code, status, rec.Header().Get("Retry-After"))
	}
}

// retryAfter reads a 429's Retry-After header in whole seconds.
func retryAfter(t *testing.T, rec *httptest.ResponseRecorder) time.Duration {
	t.Helper()
	secs, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if err != nil || secs <= 0 {
		t.Fatalf("Retry-After %q is not a positive number of seconds", rec.Header().Get("Retry-After"))
	}
	return time.Duration(secs) * time.Second
}

// guessInParallel sends n sign-ins at once, the i-th for name(i), and
// counts the answers by status.
func (d *signInDesk) guessInParallel(n int, addr string, name func(i int) string) map[int]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rec := d.signIn(addr, name(i), fmt.Sprintf("guess number %d", i))
			mu.Lock()
			statuses[rec.Code]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return statuses
}

// TestParallelGuessesForOneAccountRunAtMostTheAccountLimitOfChecks: 100
// guesses at once from one address for one name run at most the
// account's limit of password checks; every other one is a 429 that ran
// no check (the attempt is reserved before the check, not recorded after).
func TestParallelGuessesForOneAccountRunAtMostTheAccountLimitOfChecks(t *testing.T) {
	desk := newSignInDesk(t, newTestClock())
	desk.h.addUser("ada", models.RoleAdmin)
	statuses := desk.guessInParallel(100, "198.51.100.7:4000", func(int) string { return "ada" })
	checks := int(desk.compares.Load())
	if checks > wantAccountChecks || checks == 0 {
		t.Fatalf("100 parallel guesses ran %d password checks, want 1..%d (statuses %v)", checks, wantAccountChecks, statuses)
	}
	if statuses[http.StatusUnauthorized] != checks || statuses[http.StatusTooManyRequests] != 100-checks {
		t.Fatalf("statuses %v: want %d × 401 (one per check) and the rest 429", statuses, checks)
	}
}

// TestParallelGuessesForManyNamesRunAtMostTheSourceLimitOfChecks: one
// address spraying 100 different names at once (unknown names cost a
// check against the dummy hash too) runs at most the source's limit.
func TestParallelGuessesForManyNamesRunAtMostTheSourceLimitOfChecks(t *testing.T) {
	desk := newSignInDesk(t, newTestClock())
	desk.h.addUser("ada", models.RoleAdmin)
	statuses := desk.guessInParallel(100, "198.51.100.7:4000", func(i int) string { return fmt.Sprintf("user%d", i) })
	checks := int(desk.compares.Load())
	if checks > wantSourceChecks || checks == 0 {
		t.Fatalf("100 parallel guesses for different names ran %d password checks, want 1..%d (statuses %v)", checks, wantSourceChecks, statuses)
	}
	if statuses[http.StatusUnauthorized] != checks || statuses[http.StatusTooManyRequests] != 100-checks {
		t.Fatalf("statuses %v: want %d × 401 and the rest 429", statuses, checks)
	}
}

// TestBadSignInsForOneAccountDoNotStopAnotherAccountOnTheSameAddress:
// everyone behind one proxy shares its address; five bad sign-ins for
// ada lock ada, not sam.
func TestBadSignInsForOneAccountDoNotStopAnotherAccountOnTheSameAddress(t *testing.T) {
	desk := newSignInDesk(t, newTestClock())
	desk.h.addUser("ada", models.RoleAdmin)
	desk.h.addUser("sam", models.RoleSupport)
	const proxy = "203.0.113.9:5000"
	for i := 0; i < wantAccountChecks; i++ {
		wantStatus(t, "a bad sign-in for ada", desk.signIn(proxy, "ada", fmt.Sprintf("wrong %d", i)), http.StatusUnauthorized)
	}
	wantStatus(t, "ada, locked", desk.signIn(proxy, "ada", testPassword), http.StatusTooManyRequests)
	wantStatus(t, "sam's correct sign-in from the same address", desk.signIn(proxy, "sam", testPassword), http.StatusSeeOther)
}

// TestAccountLockAppliesAcrossAddresses: changing address does not buy
// more guesses at one account, and the locked sign-in runs no check.
func TestAccountLockAppliesAcrossAddresses(t *testing.T) {
	desk := newSignInDesk(t, newTestClock())
	desk.h.addUser("ada", models.RoleAdmin)
	for i := 0; i < wantAccountChecks; i++ {
		addr := fmt.Sprintf("198.51.100.%d:4000", i+1)
		wantStatus(t, "a bad sign-in from "+addr, desk.signIn(addr, "ada", "wrong password"), http.StatusUnauthorized)
	}
	before := desk.compares.Load()
	wantStatus(t, "ada from a fresh address", desk.signIn("192.0.2.50:4000", "ada", testPassword), http.StatusTooManyRequests)
	wantStatus(t, "ADA (the name is normalised)", desk.signIn("192.0.2.51:4000", " ADA ", testPassword), http.StatusTooManyRequests)
	if n := desk.compares.Load() - before; n != 0 {
		t.Fatalf("locked sign-ins ran %d password checks, want none", n)
	}
}

// TestIPv6AddressesInOneSlash64ShareASourceBucket: one host holds a whole
// /64, so its addresses count as one source; another /64 is another.
func TestIPv6AddressesInOneSlash64ShareASourceBucket(t *testing.T) {
	desk := newSignInDesk(t, newTestClock())
	for i := 0; i < wantSourceChecks; i++ {
		addr := fmt.Sprintf("[2001:db8:1:2::%x]:4000", i+1)
		wantStatus(t, "a bad sign-in from "+addr, desk.signIn(addr, fmt.Sprintf("user%d", i), "wrong password"), http.StatusUnauthorized)
	}
	wantStatus(t, "another address in the same /64", desk.signIn("[2001:db8:1:2:ffff:1:2:3]:4000", "fresh", "wrong password"), http.StatusTooManyRequests)
	wantStatus(t, "an address in the next /64", desk.signIn("[2001:db8:1:3::1]:4000", "fresh", "wrong password"), http.StatusUnauthorized)
}

// TestSignInLockExpiresAndThePageSaysWhen: a locked account answers 429
// with Retry-After and a page that names the time; once that time comes
// the correct password works.
func TestSignInLockExpiresAndThePageSaysWhen(t *testing.T) {
	clock := newTestClock()
	desk := newSignInDesk(t, clock)
	desk.h.addUser("ada", models.RoleAdmin)
	for i := 0; i < wantAccountChecks; i++ {
		wantStatus(t, "a bad sign-in", desk.signIn("198.51.100.7:4000", "ada", "wrong password"), http.StatusUnauthorized)
	}
	locked := desk.signIn("198.51.100.7:4000", "ada", testPassword)
	wantStatus(t, "ada, locked", locked, http.StatusTooManyRequests)
	wait := retryAfter(t, locked)
	until := clock.now().Add(wait).Format("15:04:05")
	if body := locked.Body.String(); !strings.Contains(body, "Too many failed sign-ins") || !strings.Contains(body, until+" UTC") {
		t.Fatalf("the 429 page does not say to try again at %s UTC:\n%s", until, body)
	}
	clock.advance(wait - time.Second)
	wantStatus(t, "a second before the lock ends", desk.signIn("198.51.100.7:4000", "ada", testPassword), http.StatusTooManyRequests)
	clock.advance(time.Second)
	wantStatus(t, "once the lock ended", desk.signIn("198.51.100.7:4000", "ada", testPassword), http.StatusSeeOther)
}

// TestCorrectSignInFromABusySharedAddressSucceedsAfterTheBackoff: an
// address that sprays names is slowed down, but its backoff is short and
// does not grow without bound, so a colleague behind the same address,
// whose own account is not locked, signs in once it has passed.
func TestCorrectSignInFromABusySharedAddressSucceedsAfterTheBackoff(t *testing.T) {
	clock := newTestClock()
	desk := newSignInDesk(t, clock)
	desk.h.addUser("sam", models.RoleSupport)
	const shared = "203.0.113.9:5000"
	guess := 0
	spray := func() *httptest.ResponseRecorder {
		guess++
		return desk.signIn(shared, fmt.Sprintf("user%d", guess), "wrong password")
	}
	for i := 0; i < wantSourceChecks; i++ {
		wantStatus(t, "a sprayed guess", spray(), http.StatusUnauthorized)
	}
	// The sprayer keeps taking every slot the backoff opens, for an hour,
	// and has just taken one when sam comes.
	end := clock.now().Add(time.Hour)
	for {
		rec := spray()
		if rec.Code == http.StatusUnauthorized && !clock.now().Before(end) {
			break
		}
		if rec.Code == http.StatusTooManyRequests {
			if wait := retryAfter(t, rec); wait > 5*time.Minute {
				t.Fatalf("the shared address's backoff grew to %s", wait)
			}
			clock.advance(retryAfter(t, rec))
		}
	}
	busy := desk.signIn(shared, "sam", testPassword)
	wantStatus(t, "sam during the backoff", busy, http.StatusTooManyRequests)
	clock.advance(retryAfter(t, busy))
	wantStatus(t, "sam after the backoff", desk.signIn(shared, "sam", testPassword), http.StatusSeeOther)
}
