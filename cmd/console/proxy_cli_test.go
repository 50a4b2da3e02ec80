package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/tools"
)

// lockedBuffer is a stderr the command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var listeningLine = regexp.MustCompile(`listening on http://(127\.0\.0\.1:\d+)`)

// startProxyCommand runs `console proxy` in-process on a free loopback
// port and returns its address, its stderr, and a stop function that
// sends the equivalent of SIGINT and returns the exit code.
func startProxyCommand(t *testing.T, db string) (addr string, stderr *lockedBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, env{strings.NewReader(""), io.Discard, stderr}, []string{"proxy", "--db", db, "--addr", "127.0.0.1:0"})
	}()
	stop = func() int {
		cancel()
		select {
		case code := <-exited:
			return code
		case <-time.After(30 * time.Second):
			t.Fatalf("console proxy did not stop; stderr:\n%s", stderr)
			return -1
		}
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listeningLine.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stderr, stop
		}
		select {
		case code := <-exited:
			t.Fatalf("console proxy exited with %d before listening; stderr:\n%s", code, stderr)
		default:
		}
	}
	stop()
	t.Fatalf("console proxy never said where it listens; stderr:\n%s", stderr)
	return "", nil, nil
}

func proxyClient(t *testing.T, addr, token string) *http.Client {
	t.Helper()
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr, User: url.UserPassword("agent", token)})}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// TestProxyCommandServesAgents: an agent with a token goes through the
// proxy; a refusal lands in the refusal log under the token's name; an
// allowlist change made by another command applies while it runs.
func TestProxyCommandServesAgents(t *testing.T) {
	db := existingDB(t)
	r := runCLI(t, "token", "create", "--db", db, "helpdesk-bot")
	token := strings.TrimSpace(r.stdout)
	if r.code != 0 {
		t.Fatalf("token create: %+v", r)
	}
	page := loopbackPage(t, "status page")
	addr, stderr, stop := startProxyCommand(t, db)
	if !waitForLine(t, stderr, "curl -x http://agent:$TOKEN@"+addr) {
		t.Errorf("no curl example on stderr:\n%s", stderr)
	}

	resp, err := proxyClient(t, addr, token).Get(page.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Outbound-Reason") != "internal_address" {
		t.Fatalf("loopback without an entry: %d %q", resp.StatusCode, resp.Header.Get("X-Outbound-Reason"))
	}
	resp, err = proxyClient(t, addr, token+"x").Get(page.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusProxyAuthRequired {
		t.Fatalf("a wrong token: %d, want 407", resp.StatusCode)
	}

	if r := runCLI(t, "allow", "add", "--db", db, strings.TrimPrefix(page.URL, "http://")); r.code != 0 {
		t.Fatalf("allow add: %+v", r)
	}
	var status int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && status != http.StatusOK; time.Sleep(50 * time.Millisecond) {
		resp, err := proxyClient(t, addr, token).Get(page.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
		if status == http.StatusOK && string(body) != "status page" {
			t.Fatalf("through the proxy: %q", body)
		}
	}
	if status != http.StatusOK {
		t.Fatalf("the allowlist entry did not apply while the proxy ran: last status %d", status)
	}

	if code := stop(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	log := stderr.String()
	if !hasLogLine(log, map[string]string{"msg": "refused", "tool": "proxy", "agent": "helpdesk-bot"}) || !strings.Contains(log, "shutting down") {
		t.Errorf("stderr lacks the refusal line or the shutdown:\n%s", log)
	}
	r = runCLI(t, "refusals", "--json", "--db", db)
	var rows []app.LoggedRefusal
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("refusals --json: %v %+v", err, r)
	}
	// The agent's refusal, the wrong token, and the refusals seen while
	// waiting for the reload: all of them the proxy's.
	var proxied, badCredential int
	for _, row := range rows {
		switch {
		case row.Tool != "proxy":
			t.Fatalf("a refusal not from the proxy: %+v", row)
		case row.Reason == "proxy_auth":
			badCredential++
		case row.Agent == "helpdesk-bot" && row.Reason == "internal_address" && row.URL == page.URL+"/":
			proxied++
		default:
			t.Fatalf("an unexpected refusal: %+v", row)
		}
	}
	if proxied == 0 || badCredential != 1 {
		t.Fatalf("the refusal log should hold the agent's refusal and one wrong token: %+v", rows)
	}
}

func TestProxyCommandAddress(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"all interfaces", []string{"--addr", "0.0.0.0:4750"}, "reachable from the network"},
		{"a LAN address", []string{"--addr", "192.168.1.20:4750"}, "add --public"},
		{"an empty host", []string{"--addr", ":4750"}, "not a loopback address"},
		{"no port", []string{"--addr", "127.0.0.1"}, "is not HOST:PORT"},
		{"a bad port", []string{"--addr", "127.0.0.1:http"}, "has no valid port"},
		{"an argument", []string{"extra"}, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"proxy", "--db", tempDB(t)}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("got exit %d %q, want 2 mentioning %q", r.code, r.stderr, tt.want)
			}
		})
	}
	if err := checkProxyAddr("0.0.0.0:4750", true); err != nil {
		t.Fatalf("--public must allow a non-loopback address: %v", err)
	}
	for _, ok := range []string{"127.0.0.1:4750", "[::1]:4750", "localhost:0"} {
		if err := checkProxyAddr(ok, false); err != nil {
			t.Fatalf("checkProxyAddr(%q): %v", ok, err)
		}
	}
}

// countingAgents knows one token and counts how often it is asked.
type countingAgents struct {
	calls int
	err   error
}

func (a *countingAgents) VerifyToken(_ context.Context, token string) (string, error) {
	a.calls++
	if a.err != nil {
		return "", a.err
	}
	if token != "obt_good" {
		return "", tools.ErrBadToken
	}
	return "helpdesk-bot", nil
}

func TestTokenAuth(t *testing.T) {
	agents := &countingAgents{}
	auth := &tokenAuth{agents: agents}
	c, err := auth.authenticate(context.Background(), "any user", "obt_good")
	if err != nil || c != (guard.Caller{Tool: "proxy", Agent: "helpdesk-bot"}) {
		t.Fatalf("a good token: %+v, %v", c, err)
	}
	if _, err := auth.authenticate(context.Background(), "", "obt_bad"); !errors.Is(err, guard.ErrProxyCredential) {
		t.Fatalf("a bad token: %v, want ErrProxyCredential (a 407)", err)
	}
	down := &tokenAuth{agents: &countingAgents{err: errors.New("database is locked")}}
	if _, err := down.authenticate(context.Background(), "", "obt_good"); err == nil || errors.Is(err, guard.ErrProxyCredential) {
		t.Fatalf("a store failure: %v, want it passed on (a 503), not a 407", err)
	}
}

// hasLogLine reports whether one JSON line of log has every field of want
// with that string value.
func hasLogLine(log string, want map[string]string) bool {
	for _, line := range strings.Split(log, "\n") {
		var fields map[string]any
		if json.Unmarshal([]byte(line), &fields) != nil {
			continue
		}
		match := true
		for k, v := range want {
			if got, _ := fields[k].(string); got != v {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
