package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/internal/app"
	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// TestIntegrationAllowThisHostWithoutRestart runs the whole path of one
// process: an integration saved in the store, aimed at a loopback service
// that is not allowlisted, is refused with the literal entry as its fix;
// once that entry is stored and the app reloads, as the console's "Allow
// this host" does, the same integration works.
func TestIntegrationAllowThisHostWithoutRestart(t *testing.T) {
	const secret = "Bearer sk_live_NEVER_SHOWN_99"
	var gotAuth string
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"order":"`+strings.TrimPrefix(r.URL.Path, "/orders/")+`","state":"shipped"}`)
	}))
	defer svc.Close()
	hostPort := strings.TrimPrefix(svc.URL, "http://")

	var logs bytes.Buffer
	ctx := context.Background()
	a, err := app.Open(ctx, tempDB(t), app.Options{Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sealed, err := a.Secrets().Seal(secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store().CreateIntegration(ctx, models.AnyRevision, models.Integration{
		Name: "order_status", Description: "Order status.", Method: "GET", URLTemplate: svc.URL + "/orders/{id}",
		Headers: []models.IntegrationHeader{{Name: "Authorization", Value: sealed, Secret: true}},
		Params:  []models.IntegrationParam{{Name: "id", Type: "string", Required: true}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	call := func() tools.IntegrationResult {
		return a.Integrations().Call(ctx, tools.Turn{Agent: "bot", Thread: "T-1"}, "order_status", map[string]json.RawMessage{"id": json.RawMessage(`"A-1"`)})
	}

	res := call()
	wantFix := "add " + hostPort + " as an internal host under Integrations → Outbound web access"
	// The refusal (the log's row) names the entry; the agent's answer does not.
	if res.OK() || !strings.Contains(res.Refusal.Fix, wantFix) || strings.Contains(res.Answer(), wantFix) {
		t.Fatalf("before the entry: want a refusal whose fix (not the agent's answer) names %q, got %q and\n%s", wantFix, res.Refusal.Fix, res.Answer())
	}
	if gotAuth != "" {
		t.Fatal("the refused service was reached")
	}

	if _, err := a.Store().AddAllowlistEntries(ctx, models.AnyRevision, []models.AllowlistEntry{{Entry: hostPort, AddedBy: "ada"}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	res = call()
	if !res.OK() || res.Status != 200 || !strings.Contains(res.Body, `"state": "shipped"`) || gotAuth != secret {
		t.Fatalf("after the entry: %s (service saw Authorization %q)", res.Answer(), gotAuth)
	}
	if strings.Contains(logs.String(), "NEVER_SHOWN") || strings.Contains(res.Answer(), "NEVER_SHOWN") {
		t.Fatalf("the secret reached the log or the answer:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "refused") {
		t.Fatalf("the refusal was not logged, so the log check proves nothing:\n%s", logs.String())
	}
}
