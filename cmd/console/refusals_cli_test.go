package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/guard/guardtest"
	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
)

// TestRefusalsCLIShowsTheTypedValue: a refusal and a network failure made
// by the guard come out of `console refusals --json` as the guard made
// them (lists as arrays, the remedy as an object, the kind spelt out), and
// --kind keeps them apart.
func TestRefusalsCLIShowsTheTypedValue(t *testing.T) {
	db := existingDB(t)
	resolver := guardtest.NewResolver()
	resolver.Answer("intranet.corp", "10.1.2.3", "fd00::7")
	a, err := app.Open(context.Background(), db, app.Options{Resolver: resolver})
	if err != nil {
		t.Fatal(err)
	}
	ctx := guard.WithCaller(context.Background(), guard.Caller{Tool: "fetch_url", Agent: "helpdesk"})
	_, policyErr := a.Guard().Get(ctx, "http://intranet.corp/wiki")
	_, networkErr := a.Guard().Get(ctx, "http://nowhere.example.com/")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	policy, ok1 := guard.AsRefusal(policyErr)
	network, ok2 := guard.AsRefusal(networkErr)
	if !ok1 || !ok2 || policy.Remedy != guard.AddInternal("intranet.corp") || network.KindOf() != guard.KindNetwork {
		t.Fatalf("the guard's refusals: %+v / %+v", policyErr, networkErr)
	}

	r := runCLI(t, "refusals", "--json", "--db", db)
	var rows []app.LoggedRefusal
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("refusals --json: %v %+v", err, r)
	}
	wantPolicy := *policy
	wantPolicy.Kind, wantPolicy.Range = guard.KindPolicy, ""
	if got := rows[1].Refusal; !reflect.DeepEqual(got, wantPolicy) {
		t.Errorf("the CLI's refusal differs from the guard's:\n got %+v\nwant %+v", got, wantPolicy)
	}
	if !reflect.DeepEqual(rows[1].Addresses, []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd00::7")}) {
		t.Errorf("addresses %v", rows[1].Addresses)
	}
	for _, want := range []string{`"kind": "policy"`, `"remedy": {`, `"kind": "add_entry"`, `"entry": "intranet.corp"`, `"kind": "network"`, `"addresses": [`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--json lacks %s:\n%s", want, r.stdout)
		}
	}

	r = runCLI(t, "refusals", "--json", "--kind", "network", "--db", db)
	rows = nil
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0].Reason != guard.ReasonDNS {
		t.Fatalf("--kind network: %v %+v", err, r)
	}
	r = runCLI(t, "refusals", "--kind", "policy", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "KIND") || !strings.Contains(r.stdout, "add the allowlist entry intranet.corp") ||
		strings.Contains(r.stdout, "nowhere.example.com") {
		t.Fatalf("--kind policy table: %+v", r)
	}
	if r := runCLI(t, "refusals", "--kind", "outage", "--db", db); r.code != 2 || !strings.Contains(r.stderr, `--kind "outage" is not a kind`) {
		t.Fatalf("a bad --kind: %+v", r)
	}
}

// TestRefusalsCLIWouldRefuse: --would-refuse lists the requests
// report-only entries would have refused, apart from the refusals, with
// the integration a call was made for, as text and as JSON.
func TestRefusalsCLIWouldRefuse(t *testing.T) {
	db := existingDB(t)
	store, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	err = store.InsertWouldRefusals(context.Background(), []models.WouldRefusal{
		{Time: time.Now(), Tool: "call_integration", Integration: "crm", Agent: "helpdesk", Ticket: "SUP-9", URL: "https://crm.example.com/c/1", Host: "crm.example.com", Port: 443,
			Code: "forbidden", Reason: "not_allowlisted", Message: "crm.example.com is not on the outbound allowlist."},
		{Time: time.Now(), Tool: "fetch_url", Agent: "helpdesk", URL: "https://news.example.net/", Host: "news.example.net", Port: 443,
			Code: "forbidden", Reason: "not_allowlisted", Message: "news.example.net is not on the outbound allowlist."},
	})
	if err := errors.Join(err, store.Close()); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "refusals", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "No refusals yet.") {
		t.Fatalf("would-be refusals were listed as refusals: %+v", r)
	}
	r := runCLI(t, "refusals", "--would-refuse", "--ticket", "SUP-9", "--json", "--db", db)
	var rows []app.LoggedWouldRefusal
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("--would-refuse --json: %v %+v", err, r)
	}
	if got := rows[0]; got.Outcome != "would_refuse" || got.Service != "crm" || got.Tool != "call_integration" || got.Reason != "not_allowlisted" {
		t.Fatalf("the would-be refusal: %+v", got)
	}
	r = runCLI(t, "refusals", "--would-refuse", "--search", "NEWS", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "news.example.net") || strings.Contains(r.stdout, "crm.example.com") {
		t.Fatalf("--would-refuse --search: %+v", r)
	}
	r = runCLI(t, "refusals", "--would-refuse", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "call_integration (crm)") {
		t.Fatalf("--would-refuse does not name the integration: %+v", r)
	}
	if r := runCLI(t, "refusals", "--would-refuse", "--kind", "network", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "--kind does not apply to --would-refuse") {
		t.Fatalf("--would-refuse --kind: %+v", r)
	}
}
