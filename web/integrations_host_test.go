package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/models"
)

// An integration saved while the policy refuses its host says so instead
// of "agents can call it now", and the list flags it with the allowlist's
// add form prefilled; once the host is allowed, both say it works.
func TestIntegrationOnARefusedHostIsFlagged(t *testing.T) {
	h := newHarness(t)
	withIntegrations(t, h)
	h.resolver.Answer("api.shop.example", "93.184.216.34")
	ada := h.signedIn("ada", models.RoleAdmin)
	addEntries(t, ada, "docs.example", "")

	form := orderForm("https://api.shop.example")
	resp := ada.postForm("/integrations/http/new", form)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	edit := ada.get(resp.Header.Get("Location"))
	flash := edit.doc.Find(`[data-testid="flash"]`)
	if !flash.HasClass("flash-error") || strings.Contains(flash.Text(), "can call it now") || !strings.Contains(flash.Text(), "cannot call it yet") {
		t.Fatalf("flash after saving on a refused host: %q (class %s)", flash.Text(), flash.AttrOr("class", ""))
	}

	list := ada.get("/integrations/http")
	warn := list.doc.Find(`[data-testid="integration-host-refused"]`)
	if warn.Length() != 1 || !strings.Contains(warn.Text(), "not on the outbound allowlist") {
		t.Fatalf("list flag: %q", warn.Text())
	}
	href, _ := warn.Find(`[data-testid="integration-host-fix"]`).Attr("href")
	u, _ := url.Parse(href)
	if u.Path != "/integrations" || u.Query().Get("entry") != "api.shop.example" || !strings.Contains(u.Query().Get("note"), "order_status") {
		t.Fatalf("fix link %q", href)
	}
	// The link fills the add form; nothing is added until it is submitted.
	allow := ada.get(href)
	if got := allow.doc.Find(`[data-testid="allow-form"] textarea[name="entries"]`).Text(); strings.TrimSpace(got) != "api.shop.example" {
		t.Fatalf("prefilled entries = %q", got)
	}
	if n := len(storedEntries(t, h)); n != 1 {
		t.Fatalf("%d entries after only opening the link", n)
	}
	// Support sees the flag, but no link to change the list.
	sam := h.signedIn("sam", models.RoleSupport)
	sl := sam.get("/integrations/http")
	if sl.doc.Find(`[data-testid="integration-host-refused"]`).Length() != 1 || sl.doc.Find(`[data-testid="integration-host-fix"]`).Length() != 0 {
		t.Error("support should see the flag without the admin's fix link")
	}

	addEntries(t, ada, "api.shop.example", "")
	if n := ada.get("/integrations/http").doc.Find(`[data-testid="integration-host-refused"]`).Length(); n != 0 {
		t.Error("the flag stays after the host was allowed")
	}
	form.Set("description", "Look up an order.")
	rev, _ := h.store.Version(t.Context(), models.SectionIntegrations)
	form.Set("revision", strconv.FormatInt(rev, 10))
	form.Set("secret_value_0", "")
	form.Set("secret_orig_0", "Authorization")
	resp = ada.postForm("/integrations/http/order_status", form)
	resp.Body.Close()
	edit = ada.get(resp.Header.Get("Location"))
	if f := edit.doc.Find(`[data-testid="flash"]`); !f.HasClass("flash-ok") {
		t.Errorf("flash after saving on an allowed host: %q", f.Text())
	}
}
