package app

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

// TestAccessRequestFromAnIntegrationIsScopedToIt: a refusal of the
// integration crm names crm, and approving the access request filed from
// it admits crm alone. Another integration calling the very same host and
// port, call_integration naming that other integration, and fetch_url are
// still refused, and never connect to the service.
func TestAccessRequestFromAnIntegrationIsScopedToIt(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	var conns, hits atomic.Int32
	svc := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok": true}`)
	}))
	svc.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	svc.Start()
	defer svc.Close()
	for _, name := range []string{"crm", "billing"} {
		in := IntegrationInput{Name: name, Description: "Look up a customer in " + name + ".", Method: "GET", URL: svc.URL + "/" + name + "/{id}",
			Params: []tools.IntegrationParam{{Name: "id", Type: tools.ParamString, Required: true}}}
		if _, err := ta.CreateIntegration(ctx, SaveIntegration{Input: in, Actor: "ada", Version: models.AnyRevision}); err != nil {
			t.Fatal(err)
		}
	}
	reg := tools.Builtin(tools.Deps{Guard: ta.Guard(), Settings: ta.Settings, Integrations: ta.Integrations()})
	call := func(tool, args string) tools.Result {
		t.Helper()
		res, err := reg.Call(ctx, tools.Call{Tool: tool, Turn: tools.Turn{Agent: "helpdesk-bot", Thread: "t"}, Args: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := call("crm", `{"id": "C-1"}`)
	if res.OK() || res.Refusal.Service != "crm" {
		t.Fatalf("crm's first call: %+v", res.Refusal)
	}
	ref := waitRefusal(t, ta, models.RefusalQuery{Integration: "crm"})
	if ref.Tool != tools.CallIntegrationName || ref.Integration != "crm" || LoggedRefusalOf(ref).Service != "crm" {
		t.Fatalf("the refusal row: tool %q integration %q", ref.Tool, ref.Integration)
	}
	ar, err := ta.RequestAccess(ctx, RequestAccess{RefusalID: ref.ID, Comment: "ticket 7 needs the CRM", Actor: "sam"})
	if err != nil || ar.Tool != "crm" || ar.Agent != "helpdesk-bot" {
		t.Fatalf("RequestAccess = %+v, %v", ar, err)
	}
	// What the card's form is prefilled with, submitted unchanged.
	if _, err := ta.ApproveAccess(ctx, ApproveAccess{ID: ar.ID, Entry: ar.Entry, Scope: scopeOfRequest(ar), Internal: ar.Internal, Actor: "ada", Version: models.AnyRevision}); err != nil {
		t.Fatal(err)
	}
	st, _ := ta.Allowlist(ctx)
	if len(st.Rows) != 1 || strings.Join(st.Rows[0].Tools, ",") != "crm" || strings.Join(st.Rows[0].Agents, ",") != "helpdesk-bot" {
		t.Fatalf("the approved entry: %+v", st.Rows)
	}
	conns.Store(0)

	if res := call("crm", `{"id": "C-1"}`); !res.OK() {
		t.Fatalf("crm is refused after the approval: %+v", res.Refusal)
	}
	if res := call(tools.CallIntegrationName, `{"name": "crm", "params": {"id": "C-2"}}`); !res.OK() {
		t.Fatalf("call_integration crm is refused after the approval: %+v", res.Refusal)
	}
	if n := hits.Load(); n != 2 {
		t.Fatalf("the service saw %d requests, want crm's 2", n)
	}
	before := conns.Load()
	for _, c := range []struct{ tool, args string }{
		{"billing", `{"id": "B-1"}`},
		{tools.CallIntegrationName, `{"name": "billing", "params": {"id": "B-2"}}`},
		{tools.FetchURLName, `{"url": "` + svc.URL + `/crm/C-3"}`},
	} {
		if res := call(c.tool, c.args); res.OK() {
			t.Errorf("%s %s was allowed by an entry scoped to crm", c.tool, c.args)
		}
	}
	if n := conns.Load(); n != before || hits.Load() != 2 {
		t.Fatalf("a refused call connected to the service: %d new connections, %d requests", n-before, hits.Load())
	}
	// Both ways of calling billing were logged as billing's refusals.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rows, _, err := ta.store.ListRefusals(ctx, models.RefusalQuery{Integration: "billing"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("billing's refusals: %d rows, want its own tool's and call_integration's", len(rows))
		}
	}
}

// waitRefusal waits for the writer to store a refusal matching q.
func waitRefusal(t *testing.T, ta testApp, q models.RefusalQuery) models.Refusal {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rows, _, err := ta.store.ListRefusals(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > 0 {
			return rows[0]
		}
	}
	t.Fatalf("no refusal matching %+v was written", q)
	return models.Refusal{}
}
