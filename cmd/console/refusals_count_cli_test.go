package main

import (
	"context"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// `console refusals` says how many alike refusals an aggregated row
// stands for, and its JSON carries the count.
func TestRefusalsListShowsAnAggregatedRowsCount(t *testing.T) {
	db := existingDB(t)
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	rows := []models.Refusal{
		{Tool: "proxy", Agent: "bot", Host: "once.example", URL: "http://once.example/", Code: "forbidden", Reason: "not_allowlisted", Message: "once"},
		{Tool: "proxy", Agent: "bot", Host: "flood.example", URL: "http://flood.example/", Code: "forbidden", Reason: "not_allowlisted", Message: "flood", Count: 1532},
	}
	if err := store.InsertRefusals(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	store.Close()
	r := runCLI(t, "refusals", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "×1532 alike requests. flood") || strings.Contains(r.stdout, "alike requests. once") {
		t.Fatalf("refusals: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "refusals", "--db", db, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"count": 1532`) || !strings.Contains(r.stdout, `"count": 1`) {
		t.Fatalf("refusals --json: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
