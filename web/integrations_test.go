package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
	"github.com/outboundhq/outbound/tools"
)

const integrationSecret = "sk_live_WEB_SECRET_7731"

// withIntegrations returns the box the harness's app seals secrets with.
func withIntegrations(t *testing.T, h *harness) *tools.SecretBox {
	t.Helper()
	return h.app.Secrets()
}

// orderForm is a valid create form for svcURL with one secret header.
func orderForm(svcURL string) url.Values {
	return url.Values{
		"name": {"order_status"}, "description": {"Look up an order's shipping state."}, "method": {"GET"},
		"url": {svcURL + "/orders/{id}?fields={fields}"}, "headers": {"Accept: application/json"},
		"secret_rows": {"2"}, "secret_name_0": {"Authorization"}, "secret_value_0": {"Bearer " + integrationSecret},
		"param_rows": {"3"}, "param_name_0": {"id"}, "param_type_0": {"string"}, "param_required_0": {"yes"}, "param_desc_0": {"The order number."},
		"param_name_1": {"fields"}, "param_type_1": {"string"},
		"revision": {"0"},
	}
}

func loopbackService(t *testing.T) *httptest.Server {
	t.Helper()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"order":"`+strings.TrimPrefix(r.URL.EscapedPath(), "/orders/")+`","auth_present":`+boolText(r.Header.Get("Authorization") == "Bearer "+integrationSecret)+`}`)
	}))
	t.Cleanup(svc.Close)
	return svc
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestIntegrationCreateEditAndSecrets(t *testing.T) {
	h := newHarness(t)
	withIntegrations(t, h)
	svc := loopbackService(t)
	ada := h.signedIn("ada", models.RoleAdmin)
	ctx := context.Background()

	resp := ada.postForm("/integrations/http/new", orderForm(svc.URL))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/integrations/http/order_status" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("create: %d %s\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	resp.Body.Close()
	if h.reloads.Load() != 1 {
		t.Fatalf("reloads %d after create, want 1", h.reloads.Load())
	}
	row, err := h.store.IntegrationByName(ctx, "order_status")
	if err != nil {
		t.Fatal(err)
	}
	sealed := row.Headers[1].Value
	if !row.Headers[1].Secret || strings.Contains(sealed, integrationSecret) || !strings.HasPrefix(sealed, "v1:") {
		t.Fatalf("the secret is not sealed at rest: %+v", row.Headers)
	}

	t.Run("secret never rendered", func(t *testing.T) {
		for _, path := range []string{"/integrations/http", "/integrations/http/order_status", "/audit"} {
			p := ada.get(path)
			if p.status != http.StatusOK {
				t.Fatalf("%s: %d", path, p.status)
			}
			if strings.Contains(p.body, integrationSecret) || strings.Contains(p.body, sealed) {
				t.Fatalf("%s shows the secret", path)
			}
		}
		list := ada.get("/integrations/http")
		if !strings.Contains(list.doc.Find(`[data-testid="integration-row"]`).Text(), "Authorization: (secret)") {
			t.Fatal("the list does not mark the secret header")
		}
	})
	t.Run("audited with (secret)", func(t *testing.T) {
		recs, _, err := h.store.ListAudit(ctx, 0, 10)
		if err != nil || len(recs) == 0 || recs[0].Action != "integration.add" {
			t.Fatalf("audit: %+v, %v", recs, err)
		}
		if !strings.Contains(recs[0].After, "Authorization: (secret)") || strings.Contains(recs[0].After, integrationSecret) || strings.Contains(recs[0].After, sealed) {
			t.Fatalf("audit after: %q", recs[0].After)
		}
	})
	t.Run("saving with an empty secret keeps it", func(t *testing.T) {
		f := orderForm(svc.URL)
		f.Set("secret_value_0", "")
		f.Set("secret_orig_0", "Authorization")
		f.Set("description", "Changed.")
		rev, _ := h.store.Version(ctx, models.SectionIntegrations)
		f.Set("revision", strconv.FormatInt(rev, 10))
		resp := ada.postForm("/integrations/http/order_status", f)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("update: %d", resp.StatusCode)
		}
		got, _ := h.store.IntegrationByName(ctx, "order_status")
		if got.Description != "Changed." || got.Headers[1].Value != sealed {
			t.Fatalf("the kept secret changed: %+v", got.Headers)
		}
		recs, _, _ := h.store.ListAudit(ctx, 0, 1)
		if recs[0].Action != "integration.update" || !strings.Contains(recs[0].Before, "(secret)") || strings.Contains(recs[0].Before+recs[0].After, sealed) {
			t.Fatalf("update audit: %+v", recs[0])
		}
	})
	t.Run("a kept secret does not follow the URL to another origin", func(t *testing.T) {
		f := orderForm("https://collector.example.net")
		f.Set("secret_value_0", "")
		f.Set("secret_orig_0", "Authorization")
		rev, _ := h.store.Version(ctx, models.SectionIntegrations)
		f.Set("revision", strconv.FormatInt(rev, 10))
		p := ada.post("/integrations/http/order_status", f)
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "stored secrets are only sent where they were typed for") {
			t.Fatalf("moving the URL with a kept secret: %d", p.status)
		}
		if got, _ := h.store.IntegrationByName(ctx, "order_status"); got.URLTemplate == "https://collector.example.net/orders/{id}?fields={fields}" || got.Headers[1].Value != sealed {
			t.Fatalf("the integration changed: %+v", got)
		}
	})
	t.Run("stale revision keeps the input", func(t *testing.T) {
		f := orderForm(svc.URL)
		f.Set("secret_orig_0", "Authorization")
		f.Set("description", "Lost?")
		p := ada.post("/integrations/http/order_status", f)
		if p.status != http.StatusConflict || p.doc.Find(`textarea[name="description"]`).Text() != "Lost?" {
			t.Fatalf("conflict: %d", p.status)
		}
		if strings.Contains(p.body, integrationSecret) {
			t.Fatal("the conflict page echoes the typed secret")
		}
	})
}

func TestIntegrationFormValidation(t *testing.T) {
	h := newHarness(t)
	withIntegrations(t, h)
	ada := h.signedIn("ada", models.RoleAdmin)
	tests := []struct {
		name, field, value, errField, want string
	}{
		{"placeholder in host", "url", "https://{id}.example.com/{fields}", "url", "placeholder sits in the host or port"},
		{"not http", "url", "ftp://example.com/{id}{fields}", "url", "must start with https:// or http://"},
		{"bad name", "name", "Order Status", "name", "lowercase letter"},
		{"reserved name", "name", "fetch_url", "name", "built-in tool"},
		{"new is the create page", "name", "new", "name", "kept for the page that creates"},
		{"header without colon", "headers", "Accept application/json", "headers", "has no colon"},
		{"body with GET", "body", `{"a": {id}}`, "body", "GET request has no body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := orderForm("https://api.example.com")
			f.Set(tt.field, tt.value)
			p := ada.post("/integrations/http/new", f)
			if p.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", p.status)
			}
			got := p.doc.Find(`[name="` + tt.errField + `"]`).Parent().Find(".field-error").Text()
			if !strings.Contains(got, tt.want) {
				t.Fatalf("%s error %q does not say %q", tt.errField, got, tt.want)
			}
			if strings.Contains(p.body, integrationSecret) {
				t.Fatal("the re-rendered form echoes the typed secret")
			}
			if list, _ := h.store.ListIntegrations(context.Background()); len(list) != 0 {
				t.Fatal("an invalid integration was stored")
			}
		})
	}
}

func TestIntegrationSupportIsReadOnly(t *testing.T) {
	h := newHarness(t)
	box := withIntegrations(t, h)
	ctx := context.Background()
	sealed, _ := box.Seal("Bearer " + integrationSecret)
	if _, err := h.store.CreateIntegration(ctx, models.AnyRevision, models.Integration{Name: "order_status", Description: "d", Method: "GET",
		URLTemplate: "https://api.example.com/orders", Headers: []models.IntegrationHeader{{Name: "Authorization", Value: sealed, Secret: true}}, Params: []models.IntegrationParam{}}); err != nil {
		t.Fatal(err)
	}
	sam := h.signedIn("sam", models.RoleSupport)
	list := sam.get("/integrations/http")
	if list.status != http.StatusOK || list.doc.Find(`[data-testid="integration-row"]`).Length() != 1 {
		t.Fatalf("support list: %d", list.status)
	}
	if list.doc.Find(`[data-testid="integration-new"]`).Length() != 0 || list.doc.Find(`a[href="/integrations/http/order_status"]`).Length() != 0 {
		t.Fatal("support is offered changes")
	}
	if strings.Contains(list.body, integrationSecret) || strings.Contains(list.body, sealed) {
		t.Fatal("support sees the secret")
	}
	if p := sam.get("/integrations/http/order_status"); p.status != http.StatusForbidden {
		t.Fatalf("support edit page: %d, want 403", p.status)
	}
	rev, _ := h.store.Version(ctx, models.SectionIntegrations)
	for _, path := range []string{"/integrations/http/new", "/integrations/http/order_status", "/integrations/http/order_status/test", "/integrations/http/order_status/delete"} {
		t.Run(path, func(t *testing.T) {
			f := orderForm("https://api.example.com")
			f.Set("name", "order_status")
			f.Set("confirmed", "yes")
			resp := sam.postForm(path, f)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("support POST %s: %d, want 403", path, resp.StatusCode)
			}
			if now, _ := h.store.Version(ctx, models.SectionIntegrations); now != rev {
				t.Fatal("a support POST changed the configuration")
			}
		})
	}
}

func TestIntegrationTestButton(t *testing.T) {
	h := newHarness(t)
	withIntegrations(t, h)
	svc := loopbackService(t)
	hostPort := strings.TrimPrefix(svc.URL, "http://")
	ada := h.signedIn("ada", models.RoleAdmin)
	resp := ada.postForm("/integrations/http/new", orderForm(svc.URL))
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	test := func() page {
		return ada.post("/integrations/http/order_status/test", url.Values{"sample_id": {"../A-1"}})
	}

	p := test()
	result := p.doc.Find(`[data-testid="test-result"]`)
	wantFix := "add " + hostPort + " as an internal host under Integrations → Outbound web access"
	if p.status != http.StatusOK || !result.HasClass("decision-refused") || !strings.Contains(result.Find(`[data-testid="test-fix"]`).Text(), wantFix) {
		t.Fatalf("before the entry: %d, result %q", p.status, result.Text())
	}

	// Allow this host: the literal entry, stored and reloaded.
	if _, err := h.store.AddAllowlistEntries(context.Background(), models.AnyRevision, []models.AllowlistEntry{{Entry: hostPort}}); err != nil {
		t.Fatal(err)
	}
	if err := h.reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	p = test()
	result = p.doc.Find(`[data-testid="test-result"]`)
	body := result.Find("pre").Text()
	if !result.HasClass("decision-allowed") || !strings.Contains(result.Text(), "200 OK") || !strings.Contains(body, `"order": "..%2FA-1"`) || !strings.Contains(body, `"auth_present": true`) {
		t.Fatalf("after the entry: %q", result.Text())
	}
	if strings.Contains(p.body, integrationSecret) {
		t.Fatal("the test result shows the secret")
	}
	if v, _ := p.doc.Find(`input[name="sample_id"]`).Attr("value"); v != "../A-1" {
		t.Fatalf("the sample value was not kept: %q", v)
	}
}

func TestIntegrationDelete(t *testing.T) {
	h := newHarness(t)
	withIntegrations(t, h)
	ada := h.signedIn("ada", models.RoleAdmin)
	resp := ada.postForm("/integrations/http/new", orderForm("https://api.example.com"))
	resp.Body.Close()
	ctx := context.Background()
	rev, _ := h.store.Version(ctx, models.SectionIntegrations)
	f := url.Values{"revision": {strconv.FormatInt(rev, 10)}}
	confirm := ada.post("/integrations/http/order_status/delete", f)
	if confirm.status != http.StatusOK || confirm.doc.Find(`input[name="confirmed"][value="yes"]`).Length() != 1 {
		t.Fatalf("no confirmation page: %d", confirm.status)
	}
	if _, err := h.store.IntegrationByName(ctx, "order_status"); err != nil {
		t.Fatal("deleted before confirmation")
	}
	f.Set("confirmed", "yes")
	resp = ada.postForm("/integrations/http/order_status/delete", f)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if _, err := h.store.IntegrationByName(ctx, "order_status"); err == nil {
		t.Fatal("not deleted")
	}
	recs, _, _ := h.store.ListAudit(ctx, 0, 1)
	if recs[0].Action != "integration.delete" || !strings.Contains(recs[0].Before, "(secret)") || strings.Contains(recs[0].Before, integrationSecret) {
		t.Fatalf("delete audit: %+v", recs[0])
	}
}
