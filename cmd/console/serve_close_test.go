package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve discarded App.Close's error, so a stop that left rows out of the
// database (here: another connection holds SQLite's write lock through the
// whole stop) exited 0, while proxy exits 1 on the same error. A service
// manager or script watching the exit code must see the difference.
func TestServeExitsNonZeroWhenShutdownLeavesRowsUnwritten(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the log writers' 10 s shutdown grace")
	}
	db := existingDB(t)
	token := strings.TrimSpace(runCLI(t, "token", "create", "--db", db, "bot").stdout)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, env{strings.NewReader(""), io.Discard, stderr}, []string{"serve", "--db", db, "--addr", "127.0.0.1:0"})
	}()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := serveLine.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("serve never said where it listens:\n%s", stderr)
		}
	}
	release := holdWriteLock(t, db)
	defer release()
	req, _ := http.NewRequest("POST", base+"/api/v1/tools/fetch_url", strings.NewReader(`{"url":"http://10.0.0.1/"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	select {
	case code := <-exited:
		if code != 1 {
			t.Errorf("serve exited %d after a stop that left a refusal out of the database, want 1", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not stop; stderr:\n%s", stderr)
	}
	if out := stderr.String(); !strings.Contains(out, "console serve: ") || !strings.Contains(out, "rows not written to the database") {
		t.Errorf("serve's last word does not say what the stop left unwritten:\n%s", out)
	}
}

// mcp over stdio discarded App.Close's error the same way: a session
// whose refusal the stop could not write exited 0.
func TestMCPExitsNonZeroWhenShutdownLeavesRowsUnwritten(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the log writers' 10 s shutdown grace")
	}
	db := existingDB(t)
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	stderr := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(context.Background(), env{serverIn, serverOut, stderr}, []string{"mcp", "--db", db, "--agent", "stdio-test"})
		serverOut.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr)
	}
	release := holdWriteLock(t, db)
	defer release()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_url", Arguments: map[string]any{"url": "http://10.0.0.1/"}})
	if err != nil || !res.IsError {
		t.Fatalf("a refused fetch over stdio: %v, %+v", err, res)
	}
	cs.Close() // the client hangs up: mcp stops
	select {
	case code := <-exited:
		if code != 1 {
			t.Errorf("mcp exited %d after a stop that left a refusal out of the database, want 1", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("mcp did not stop; stderr:\n%s", stderr)
	}
	if out := stderr.String(); !strings.Contains(out, "rows not written to the database") {
		t.Errorf("mcp's last word does not say what the stop left unwritten:\n%s", out)
	}
}
