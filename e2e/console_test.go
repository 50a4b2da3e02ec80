package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// The e2e tests drive the real product: the console binary is built once,
// and each test runs `console serve` on 127.0.0.1 over its own database,
// exactly as an admin would, then points a browser at it.

var consoleBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// consoleBinary builds cmd/console once for the package.
func consoleBinary(t *testing.T) string {
	t.Helper()
	consoleBuild.once.Do(func() {
		consoleBuild.dir, consoleBuild.err = os.MkdirTemp("", "outbound-e2e-")
		if consoleBuild.err != nil {
			return
		}
		consoleBuild.path = filepath.Join(consoleBuild.dir, "console")
		out, err := exec.Command("go", "build", "-o", consoleBuild.path, "../cmd/console").CombinedOutput()
		if err != nil {
			consoleBuild.err = fmt.Errorf("go build ../cmd/console: %v\n%s", err, out)
		}
	})
	if consoleBuild.err != nil {
		t.Fatal(consoleBuild.err)
	}
	return consoleBuild.path
}

// removeConsoleBuild deletes the built binary; TestMain calls it.
func removeConsoleBuild() {
	if consoleBuild.dir != "" {
		os.RemoveAll(consoleBuild.dir)
	}
}

// console is one running `console serve`.
type console struct {
	t     *testing.T
	bin   string
	db    string
	url   string
	setup string

	mu     sync.Mutex
	stderr strings.Builder
}

var (
	listeningLine = regexp.MustCompile(`Outbound console on (http://127\.0\.0\.1:\d+)`)
	setupLine     = regexp.MustCompile(`(http://127\.0\.0\.1:\d+/setup\?token=\S+)`)
)

// startConsole runs `console serve --addr 127.0.0.1:0` over a fresh
// database and waits until it answers /healthz. It is stopped with SIGTERM
// when the test ends, and must shut down cleanly.
func startConsole(t *testing.T) *console {
	t.Helper()
	c := &console{t: t, bin: consoleBinary(t), db: filepath.Join(t.TempDir(), "console.db")}
	cmd := exec.Command(c.bin, "serve", "--addr", "127.0.0.1:0", "--db", c.db)
	cmd.Env = append(os.Environ(), "CONSOLE_SECRET_KEY=") // the key file next to the database
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.stderr.WriteString(line + "\n")
			if m := listeningLine.FindStringSubmatch(line); m != nil {
				c.url = m[1]
			}
			if m := setupLine.FindStringSubmatch(line); m != nil {
				c.setup = m[1]
			}
			// A fresh database has no user, so serve prints both lines.
			done := c.url != "" && c.setup != ""
			c.mu.Unlock()
			if done && !signalled {
				signalled = true
				close(ready)
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("console serve did not shut down cleanly: %v\n%s", err, c.log())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("console serve did not stop within 20s of SIGTERM\n%s", c.log())
		}
	})
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("console serve did not print its address and setup link within 30s:\n%s", c.log())
	}
	c.waitHealthy()
	return c
}

func (c *console) log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

func (c *console) waitHealthy() {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(c.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("console at %s never became healthy:\n%s", c.url, c.log())
}

// cli runs another console command against the same database, as a
// second process would, and returns its stdout.
func (c *console) cli(stdin string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append(args, "--db", c.db)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("console %v: %v\n%s%s", args, err, out.String(), errOut.String())
	}
	return out.String()
}

const adminPassword = "correct horse battery staple"

// setupAdmin creates the first admin through the one-time setup link, in
// the browser, and leaves the page signed in.
func (c *console) setupAdmin(page playwright.Page, name string) {
	c.t.Helper()
	mustGoto(c.t, page, c.setup)
	fill(c.t, page, `input[name="name"]`, name)
	fill(c.t, page, `input[name="password"]`, adminPassword)
	fill(c.t, page, `input[name="password2"]`, adminPassword)
	click(c.t, page, `button[type="submit"]`)
	if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/integrations$`)); err != nil {
		c.t.Fatalf("after setup: %v", err)
	}
}

// signIn opens the sign-in page and signs in as name with password.
func (c *console) signIn(page playwright.Page, name, password string) {
	c.t.Helper()
	mustGoto(c.t, page, c.url+"/login")
	signInHere(c.t, page, name, password)
}

// signInHere fills in the sign-in form the page is showing.
func signInHere(t *testing.T, page playwright.Page, name, password string) {
	t.Helper()
	fill(t, page, `input[name="name"]`, name)
	fill(t, page, `input[name="password"]`, password)
	click(t, page, `button[type="submit"]`)
}

func mustGoto(t *testing.T, page playwright.Page, url string) playwright.Response {
	t.Helper()
	resp, err := page.Goto(url)
	if err != nil {
		t.Fatalf("goto %s: %v", url, err)
	}
	return resp
}

func fill(t *testing.T, page playwright.Page, selector, value string) {
	t.Helper()
	if err := page.Locator(selector).First().Fill(value); err != nil {
		t.Fatalf("fill %s: %v", selector, err)
	}
}

func click(t *testing.T, page playwright.Page, selector string) {
	t.Helper()
	if err := page.Locator(selector).First().Click(); err != nil {
		t.Fatalf("click %s: %v", selector, err)
	}
}

// see asserts, web-first, that selector's text contains want.
func see(t *testing.T, page playwright.Page, selector, want string) {
	t.Helper()
	if err := expect.Locator(page.Locator(selector).First()).ToContainText(want); err != nil {
		t.Fatalf("%s should contain %q: %v", selector, want, err)
	}
}
