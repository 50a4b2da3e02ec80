package main

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3" // the other connection that holds the lock

	"github.com/outboundhq/outbound/models"
)

// holdWriteLock takes SQLite's write lock on path from a connection of its
// own, as another process (a long purge, a VACUUM, sqlite3 at a shell)
// would, and returns the function that releases it.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite3", path+"?_txlock=immediate&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin() // BEGIN IMMEDIATE: the write lock, from the first statement
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("DELETE FROM settings WHERE key = 'no such key'"); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			_ = tx.Rollback()
			_ = db.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// initWithAdminAndToken makes the database db with an admin, ada, and an
// agent's token, which it returns, as a deployment's first steps do.
func initWithAdminAndToken(t *testing.T, db, agent string) string {
	t.Helper()
	if r := runCLI(t, "init", "--db", db); r.code != 0 {
		t.Fatal(r)
	}
	if r := runCLIWithStdin(t, "correct horse battery\n", "user", "add", "--role", "admin", "--db", db, "ada"); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI(t, "token", "create", "--db", db, agent)
	token := tokenLine.FindString(r.stdout)
	if r.code != 0 || token == "" {
		t.Fatal(r)
	}
	return token
}

// A process must start, and answer agents from the policy it read, while
// another connection holds the write lock: nothing at start-up may need it
// when the schema is current (it once waited for the 5 s busy timeout on a
// header pragma and failed with "database is locked"). Its refusals queue
// and reach the database once the lock is released.
func TestProcessesStartWhileAnotherHoldsTheWriteLock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the console binary and runs two processes")
	}
	bin := filepath.Join(t.TempDir(), "console")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv("CONSOLE_SECRET_KEY", replicaKey)
	db := tempDB(t)
	token := initWithAdminAndToken(t, db, "locked-agent")

	release := holdWriteLock(t, db)
	start := time.Now()
	proxy := startReplica(t, bin, db, proxyLine, "proxy")
	serve := startReplica(t, bin, db, serveLine, "serve")
	took := time.Since(start)
	t.Logf("proxy and serve started in %v under the held write lock", took)
	if took > 4*time.Second { // below one busy timeout: nothing waited on the lock
		t.Errorf("starting took %v with the lock held; start-up waited on it", took)
	}

	// Agents are answered from the loaded policy, without waiting.
	proxyURL, _ := url.Parse(proxy.addr)
	proxyURL.User = url.UserPassword("agent", token)
	client := &http.Client{Timeout: 4 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	const n = 5
	for range n {
		t0 := time.Now()
		resp, err := client.Get("http://169.254.169.254/latest/meta-data/")
		if err != nil {
			t.Fatalf("a proxied request under the held lock: %v\n%s", err, proxy.log())
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("the metadata address answered %d, want 403", resp.StatusCode)
		}
		if d := time.Since(t0); d > time.Second {
			t.Errorf("a refusal took %v under the held lock", d)
		}
	}
	resp, err := http.Get(serve.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	store, err := models.Open(db) // reads only: the schema is current
	if err != nil {
		t.Fatalf("opening the database under the held lock: %v", err)
	}
	defer store.Close()
	reader, err := sql.Open("sqlite3", db+"?_query_only=on")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	// Every refusal, aggregated or not (five alike ones are two rows).
	count := func() int64 {
		var total int64
		if err := reader.QueryRowContext(context.Background(), "SELECT COALESCE(SUM(repeat_count), 0) FROM refusals").Scan(&total); err != nil {
			t.Fatal(err)
		}
		return total
	}
	if got := count(); got != 0 {
		t.Fatalf("%d refusals in the database while the lock is held; want them queued", got)
	}
	release()
	deadline := time.Now().Add(15 * time.Second)
	for count() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d refusals reached the database after the lock was released\n%s", count(), n, proxy.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
