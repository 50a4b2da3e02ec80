package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
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
