package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// TestServeShutdownWritesQueuedRefusals: refusals still queued when the
// console is told to stop are written before it exits.
func TestServeShutdownWritesQueuedRefusals(t *testing.T) {
	db := existingDB(t)
	token := strings.TrimSpace(runCLI(t, "token", "create", "--db", db, "bot").stdout)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() { done <- serve(ctx, env{strings.NewReader(""), &strings.Builder{}, &stderr}, db, l) }()
	base := "http://" + l.Addr().String()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never answered: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	const n = 5
	for i := 0; i < n; i++ {
		req, _ := http.NewRequest("POST", base+"/api/v1/tools/fetch_url", strings.NewReader(`{"url":"http://10.0.0.`+string(rune('1'+i))+`/"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if out["ok"] != false {
			t.Fatalf("a private address was fetched: %v", out)
		}
	}
	cancel() // at once: the refusals are most likely still in the writer's queue
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	r := runCLI(t, "refusals", "--json", "--db", db)
	var rows []app.LoggedRefusal
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != n {
		t.Fatalf("%d refusals written after shutdown, want %d (%v)", len(rows), n, err)
	}
}

func TestPurgeLoopKeepsTheRetentionSetting(t *testing.T) {
	db := existingDB(t)
	if r := runCLI(t, "settings", "set", "--db", db, "retention_days", "7"); r.code != 0 {
		t.Fatal(r)
	}
	a, err := app.Open(context.Background(), db, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	now := time.Now()
	if err := a.Store().InsertRefusals(context.Background(), []models.Refusal{
		{Host: "old.example", Time: now.AddDate(0, 0, -8)},
		{Host: "recent.example", Time: now.AddDate(0, 0, -6)},
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.PurgeLoop(ctx) // purges at once, then every hour
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rows, _, err := a.Store().ListRefusals(context.Background(), models.RefusalQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 {
			if rows[0].Host != "recent.example" {
				t.Fatalf("the wrong refusal was purged: %s kept", rows[0].Host)
			}
			return
		}
	}
	t.Fatal("the refusal older than the retention was not purged")
}
