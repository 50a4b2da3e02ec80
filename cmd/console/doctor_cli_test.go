package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/tools"
)

// brokenBrowser makes every piece of the browser missing for the test:
// no Chromium where it is looked for, no driver in any cache, no node.
func brokenBrowser(t *testing.T) {
	t.Helper()
	t.Setenv("OUTBOUND_CHROMIUM", filepath.Join(t.TempDir(), "no-chromium"))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("OUTBOUND_CACHE", "")
	t.Setenv("PLAYWRIGHT_DRIVER_PATH", "")
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", "")
	t.Setenv("PATH", t.TempDir())
	t.Chdir(t.TempDir())
}

// TestDoctorNamesEachBrokenPieceAndItsFix: with the browser tools on, a
// missing browser fails doctor with a fix per piece; with them off it is
// a warning and doctor succeeds; a missing database always fails.
func TestDoctorNamesEachBrokenPieceAndItsFix(t *testing.T) {
	db := existingDB(t)
	brokenBrowser(t)

	r := runCLI(t, "doctor", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "ok    database") || !strings.Contains(r.stdout, "browser setting    off") ||
		!strings.Contains(r.stdout, "take_screenshot answers that it is not available") {
		t.Fatalf("browser off: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"FAIL  Chromium", "apt-get install chromium",
		"FAIL  node", "apt-get install nodejs",
		"FAIL  Playwright driver", "npm install playwright-core@1.52.0", "ln -sfn ../node_modules/playwright-core driver/package",
		"skip  driver version", "skip  launch",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor does not say %q:\n%s", want, r.stdout)
		}
	}
	if r := runCLI(t, "settings", "set", "browser", "confirm", "--db", db); r.code != 0 {
		t.Fatalf("settings set: %+v", r)
	}
	r = runCLI(t, "doctor", "--db", db)
	if r.code != 1 || !strings.Contains(r.stdout, "The browser tools are on (browser = confirm)") || !strings.Contains(r.stderr, "needs fixing") {
		t.Fatalf("browser confirm: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "doctor", "--db", filepath.Join(t.TempDir(), "missing.db"))
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL  database") || !strings.Contains(r.stdout, "console init") {
		t.Fatalf("missing database: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDoctorLaunchesTheRealBrowser: where the browser is installed, every
// piece is found and a real launch succeeds.
func TestDoctorLaunchesTheRealBrowser(t *testing.T) {
	if os.Getenv("OUTBOUND_REQUIRE_BROWSER") == "" {
		if _, err := os.Stat("/usr/bin/chromium"); err != nil {
			t.Skip("no Chromium here")
		}
	}
	r := runCLI(t, "doctor", "--db", existingDB(t))
	if strings.Contains(r.stdout, "FAIL  Playwright driver") && os.Getenv("OUTBOUND_REQUIRE_BROWSER") == "" {
		t.Skip("no Playwright driver here")
	}
	if r.code != 0 || !strings.Contains(r.stdout, "ok    launch") || !strings.Contains(r.stdout, "ok    driver version     1.52.0") || !strings.Contains(r.stdout, "Everything works.") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestServeWarnsOnceWhenTheBrowserToolsCannotWork: one log line when the
// setting needs a browser that is missing, none when it is off.
func TestServeWarnsOnceWhenTheBrowserToolsCannotWork(t *testing.T) {
	brokenBrowser(t)
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	warnBrowserBroken(log, tools.BrowserOff)
	if buf.Len() != 0 {
		t.Fatalf("a warning while the browser tools are off: %s", buf.String())
	}
	warnBrowserBroken(log, tools.BrowserReadOnly)
	if lines := strings.Count(buf.String(), "\n"); lines != 1 || !strings.Contains(buf.String(), "console doctor") || !strings.Contains(buf.String(), `"level":"WARN"`) {
		t.Fatalf("want one warning naming console doctor: %s", buf.String())
	}
}

// TestTerminalConfirmationAsksEveryTime: at a terminal the person sees the
// action and answers; only y or yes goes ahead; without a terminal the
// step is refused, with how to confirm it.
func TestTerminalConfirmationAsksEveryTime(t *testing.T) {
	a := tools.SideEffect{Tool: "browser_type", What: `Type "ada@example.com" into the field Email.`, Where: "https://vendor.example/subscribe"}
	var out bytes.Buffer
	ask := terminalConfirmer(strings.NewReader("y\nno\n\nYES\n"), &out, true)
	var got []tools.Answer
	for range 5 {
		got = append(got, ask(context.Background(), a).Answer)
	}
	want := []tools.Answer{tools.Accepted, tools.Declined, tools.Declined, tools.Accepted, tools.Declined}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("answers %v, want %v", got, want)
		}
	}
	if n := strings.Count(out.String(), "Allow it? [y/N]"); n != 5 || !strings.Contains(out.String(), "ada@example.com") || !strings.Contains(out.String(), a.Where) {
		t.Fatalf("asked %d times: %s", n, out.String())
	}
	c := terminalConfirmer(strings.NewReader("y\n"), io.Discard, false)(context.Background(), a)
	if c.Answer != tools.Unasked || !strings.Contains(c.Fix, "terminal") {
		t.Fatalf("without a terminal: %+v", c)
	}
	if isTerminal(strings.NewReader("")) {
		t.Fatal("a reader is not a terminal")
	}
}

// TestServeAndMCPWarnAtStart: a console whose settings turn the browser
// tools on, where the browser is missing, says so once in its log at
// start, for serve and for mcp alike.
func TestServeAndMCPWarnAtStart(t *testing.T) {
	brokenBrowser(t)
	db := existingDB(t)
	if r := runCLI(t, "settings", "set", "browser", "read_only", "--db", db); r.code != 0 {
		t.Fatalf("settings set: %+v", r)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, env{strings.NewReader(""), io.Discard, &stderr}, db, l) }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "Outbound console on"); {
		if time.Now().After(deadline) {
			t.Fatalf("serve never started: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if n := strings.Count(stderr.String(), "the browser tools are on but the browser cannot work"); n != 1 {
		t.Fatalf("serve warned %d times:\n%s", n, stderr.String())
	}

	var mcpErr bytes.Buffer
	code := run(context.Background(), env{strings.NewReader(""), io.Discard, &mcpErr}, []string{"mcp", "--db", db})
	if code != 0 || strings.Count(mcpErr.String(), "run `console doctor` for the fix") != 1 {
		t.Fatalf("mcp: exit %d\n%s", code, mcpErr.String())
	}
}
