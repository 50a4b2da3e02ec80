package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startServeCommand runs `console serve ARGS` in-process and returns the
// address it printed, its stderr, and a stop function.
func startServeCommand(t *testing.T, args ...string) (base string, stderr *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, env{strings.NewReader(""), io.Discard, stderr}, append([]string{"serve"}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("console serve did not stop; stderr:\n%s", stderr)
		}
	})
	onLine := regexp.MustCompile(`Outbound console on (\S+) `)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := onLine.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stderr
		}
		select {
		case code := <-exited:
			t.Fatalf("console serve exited with %d before listening; stderr:\n%s", code, stderr)
		default:
		}
	}
	t.Fatalf("console serve never said where it listens; stderr:\n%s", stderr)
	return "", nil
}

// TestServeRefusesANetworkAddressWithoutPublic: an --addr beyond loopback
// puts the sign-in page and the API on the network, so serve refuses it
// unless --public says so, and says how to do that safely; nothing is
// created.
func TestServeRefusesANetworkAddressWithoutPublic(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:0"} {
		t.Run(addr, func(t *testing.T) {
			db := tempDB(t)
			r := runCLI(t, "serve", "--db", db, "--addr", addr)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			for _, want := range []string{"not a loopback address", "sign-in page", "reachable from the network", "--public", "--tls-cert", "--public-url"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q: %s", want, r.stderr)
				}
			}
			assertMissing(t, db)
		})
	}
}

// TestServePublicWarnsOnceAndLinksToLoopback: with --public serve starts
// on all interfaces, warns once, and its setup link is one a browser can
// open (never 0.0.0.0 or [::]).
func TestServePublicWarnsOnceAndLinksToLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		t.Run(addr, func(t *testing.T) {
			base, stderr := startServeCommand(t, "--db", tempDB(t), "--addr", addr, "--public")
			var link string
			setup := regexp.MustCompile(`\s(\S+/setup\?token=\S+)`)
			for deadline := time.Now().Add(5 * time.Second); link == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if m := setup.FindStringSubmatch(stderr.String()); m != nil {
					link = m[1]
				}
			}
			out := stderr.String()
			if link == "" {
				t.Fatalf("no setup link: %s", out)
			}
			if !regexp.MustCompile(`^http://(127\.0\.0\.1|localhost):\d+/setup\?token=`).MatchString(link) || !strings.HasPrefix(link, base) {
				t.Fatalf("setup link %q (console on %q) is not a loopback address a browser can open", link, base)
			}
			if strings.Contains(out, "://0.0.0.0") || strings.Contains(out, "://[::]") {
				t.Errorf("stderr links to an unspecified address: %s", out)
			}
			if n := strings.Count(out, "reachable from the network"); n != 1 {
				t.Errorf("the network warning appears %d times, want once: %s", n, out)
			}
			resp, err := http.Get(link)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d", link, resp.StatusCode)
			}
		})
	}
}

// waitForLine waits until stderr holds want: a line written just after
// another waits out the log's 10 ms between writes (log_batch.go).
func waitForLine(t *testing.T, stderr *lockedBuffer, want string) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), want); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
