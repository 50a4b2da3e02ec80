package e2e

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// orderAPIKey is the secret header value the order service demands; the
// test proves it reaches the service and never a page.
const orderAPIKey = "sk-live-7f3a9c2e41d8b605"

// orderService is a loopback JSON API that answers only with the key.
func orderService() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Api-Key") != orderAPIKey {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"missing or wrong X-Api-Key"}`)
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/orders/")
		io.WriteString(w, `{"order":"`+id+`","status":"shipped","carrier":"DHL","eta":"Thursday"}`)
	})
}

// createOrderIntegration fills in the new-integration form for the order
// service at base and submits it, leaving the page on the saved
// integration's edit page.
func createOrderIntegration(t *testing.T, page playwright.Page, base string) {
	t.Helper()
	mustGoto(t, page, "/integrations/http/new")
	form := `[data-testid="integration-form"] `
	fill(t, page, form+`input[name="name"]`, "lookup_order")
	fill(t, page, form+`textarea[name="description"]`, "Look up an order's shipping status by its number, e.g. when a customer asks where their parcel is.")
	fill(t, page, form+`input[name="url"]`, base+"/orders/{order_id}")
	fill(t, page, form+`textarea[name="headers"]`, "Accept: application/json")
	fill(t, page, form+`input[name="secret_name_0"]`, "X-Api-Key")
	fill(t, page, form+`input[name="secret_value_0"]`, orderAPIKey)
	fill(t, page, form+`input[name="param_name_0"]`, "order_id")
	if err := page.Locator(form + `input[name="param_required_0"]`).Check(); err != nil {
		t.Fatal(err)
	}
	fill(t, page, form+`input[name="param_desc_0"]`, "The order number, e.g. A-1042")
	click(t, page, form+`button.primary[type="submit"]`)
	if err := expect.Page(page).ToHaveURL(regexp.MustCompile(`/integrations/http/lookup_order$`)); err != nil {
		t.Fatalf("creating the integration: %v", err)
	}
	see(t, page, `[data-testid="flash"]`, "lookup_order")
}

// TestAdminCreatesAndTestsAnIntegration: an admin allows the service's
// host, defines an integration with a parameter and a secret header in
// the browser, presses Test and reads the pretty-printed answer; the
// secret never shows on a page afterwards.
func TestAdminCreatesAndTestsAnIntegration(t *testing.T) {
	c, page := adminConsole(t)
	svc := serveCounting(t, orderService())

	addEntries(t, page, hostPort(svc.URL), "order service for lookup_order")
	seeBadge(t, page, "1 ALLOWED")
	createOrderIntegration(t, page, svc.URL)

	fill(t, page, `[data-testid="integration-test"] input[name="sample_order_id"]`, "A-1042")
	click(t, page, `[data-testid="integration-test"] button[type="submit"]`)
	result := `[data-testid="test-result"]`
	see(t, page, result+" h3", "200 OK")
	see(t, page, result, "GET "+svc.URL+"/orders/A-1042")
	body, err := page.Locator(result + " pre").TextContent()
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"order\": \"A-1042\",\n  \"status\": \"shipped\",\n  \"carrier\": \"DHL\",\n  \"eta\": \"Thursday\"\n}"
	if strings.TrimSpace(body) != want {
		t.Fatalf("the test result body is\n%s\nwant the pretty-printed JSON\n%s", body, want)
	}
	if n := svc.Hits(); n != 1 {
		t.Fatalf("the order service got %d requests from one Test, want 1", n)
	}

	// The secret is write-only: no page the admin can open shows it.
	for _, path := range []string{"/integrations/http/lookup_order", "/integrations/http", "/integrations", "/audit"} {
		t.Run("no secret on "+path, func(t *testing.T) {
			mustGoto(t, page, c.url+path)
			see(t, page, "main", "lookup_order")
			html, err := page.Content()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(html, orderAPIKey) {
				t.Fatalf("%s shows the secret header value", path)
			}
		})
	}
	mustGoto(t, page, c.url+"/integrations/http/lookup_order")
	if err := expect.Locator(page.Locator(`input[name="secret_value_0"]`)).ToHaveValue(""); err != nil {
		t.Fatalf("the stored secret's field must be empty: %v", err)
	}
	if err := expect.Locator(page.Locator(`input[name="secret_value_0"]`)).ToHaveAttribute("placeholder", regexp.MustCompile(`stored`)); err != nil {
		t.Fatalf("the stored secret should be marked as stored: %v", err)
	}
}

// TestRenameWarningFollowsTheName: on an integration's edit page the
// warning that a rename breaks agents that call the old name shows as
// soon as the name differs from the stored one, and hides when it is
// back; also when the new name was typed before app.js ran (found with
// the allowlist's search: a loaded machine ran the script after the
// typing, whose input events had gone by).
func TestRenameWarningFollowsTheName(t *testing.T) {
	c, page := adminConsole(t)
	svc := serveCounting(t, orderService())
	addEntries(t, page, hostPort(svc.URL), "order service for lookup_order")
	createOrderIntegration(t, page, svc.URL)
	name := `[data-testid="integration-form"] input[name="name"]`
	warning := page.Locator(`[data-testid="rename-warning"]`)

	if err := expect.Locator(warning).ToBeHidden(); err != nil {
		t.Fatalf("the warning shows before any rename: %v", err)
	}
	fill(t, page, name, "find_order")
	if err := expect.Locator(warning).ToBeVisible(); err != nil {
		t.Fatalf("typing a new name shows no warning: %v", err)
	}
	fill(t, page, name, "lookup_order")
	if err := expect.Locator(warning).ToBeHidden(); err != nil {
		t.Fatalf("the warning stays with the stored name back: %v", err)
	}

	let := holdAppJS(t, page)
	gotoParsed(t, page, c.url+"/integrations/http/lookup_order")
	fill(t, page, name, "find_order")
	if hidden, err := warning.IsHidden(); err != nil || !hidden {
		t.Fatalf("the warning showed before app.js ran (%v); the test wants it hidden then", err)
	}
	let()
	if err := expect.Locator(warning).ToBeVisible(); err != nil {
		t.Fatalf("a name typed before app.js ran shows no warning once it runs: %v", err)
	}
}
