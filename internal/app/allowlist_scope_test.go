package app

import (
	"context"
	"testing"

	"github.com/outboundhq/outbound/guard"
	"github.com/outboundhq/outbound/models"
)

func TestIntegrationHostEntry(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://crm.intranet.corp:8443/api/{id}", "crm.intranet.corp:8443"},
		{"https://crm.intranet.corp:443/api", "crm.intranet.corp"},
		{"http://10.0.0.5/x?y={q}", "10.0.0.5"},
		{"https://{tenant}.crm.example.com/", ""},
	}
	for _, tt := range tests {
		got, err := integrationHostEntry(tt.in)
		if got != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("integrationHostEntry(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// The case through the operation: the CRM integration alone
// reaches its internal host; agents keep the public web.
func TestAllowIntegrationHostKeepsPublicWeb(t *testing.T) {
	ctx := context.Background()
	ta := openTestApp(t)
	ta.resolver.Answer("crm.intranet.corp", "10.9.0.4")
	if _, err := ta.store.CreateIntegration(ctx, models.AnyRevision, models.Integration{Name: "crm", Method: "GET", URLTemplate: "https://crm.intranet.corp:8443/api/{id}"}); err != nil {
		t.Fatal(err)
	}
	res, err := ta.AllowIntegrationHost(ctx, "crm", "https://crm.intranet.corp:8443/api/{id}", "ada")
	if err != nil || len(res.Added) != 1 || res.LeftPublicWeb {
		t.Fatalf("AllowIntegrationHost = %+v, %v", res, err)
	}
	crm := guard.WithCaller(ctx, guard.Caller{Agent: "bot", Tool: "call_integration", Service: "crm"})
	if d := ta.Guard().Decide(crm, "https://crm.intranet.corp:8443/api/1"); !d.Allowed {
		t.Fatalf("the integration is refused its host: %s", d.Message)
	}
	fetch := guard.WithCaller(ctx, guard.Caller{Agent: "bot", Tool: "fetch_url"})
	if d := ta.Guard().Decide(fetch, "https://crm.intranet.corp:8443/api/1"); d.Allowed {
		t.Fatal("fetch_url reaches the integration's internal host")
	}
	if !ta.Guard().Policy().PublicWeb() {
		t.Fatal("the default scope left PUBLIC WEB")
	}
	if res, err := ta.AllowIntegrationHost(ctx, "crm", "https://crm.intranet.corp:8443/other", "ada"); err != nil || len(res.AlreadyListed) != 1 {
		t.Fatalf("again: %+v %v", res, err)
	}
	st, _ := ta.Allowlist(ctx)
	if len(st.Rows) != 1 || !st.Rows[0].Internal || st.Rows[0].ScopeKey == "" || st.Rows[0].Tools[0] != "crm" {
		t.Fatalf("rows: %+v", st.Rows)
	}
}
