package web

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

// TestRefusalLogShowsBrowserConversations: refusals of the browser tools
// appear under their own tool names, with the site and the agent, can be
// filtered by tool, and a page's own refused request says it came through
// the conversation's browser.
func TestRefusalLogShowsBrowserConversations(t *testing.T) {
	h := newHarness(t)
	at := past.Add(time.Hour)
	f := seedLog(t, h, []string{"fetch", "open-other-site", "page-request", "typing"}, []models.Refusal{
		{Time: at, Tool: "fetch_url", Agent: "helpdesk", Host: "intranet.corp", URL: "http://intranet.corp/", Code: "forbidden", Reason: "internal_name"},
		{Time: at.Add(time.Minute), Tool: "browser_open", Agent: "vendor-bot", Thread: "mcp-session-1", Host: "other.example.net", URL: "https://other.example.net/?q=secret", Code: "forbidden", Reason: "not_allowlisted"},
		{Time: at.Add(2 * time.Minute), Tool: "browser_click", Agent: "vendor-bot", Thread: "mcp-session-1", Host: "10.0.0.7", URL: "http://10.0.0.7/", Code: "forbidden", Reason: "internal_address", Proxied: true},
		{Time: at.Add(3 * time.Minute), Tool: "browser_type", Agent: "vendor-bot", Thread: "mcp-session-1", Host: "vendor.example", URL: "https://vendor.example/subscribe", Code: "forbidden", Reason: "needs_confirmation"},
	})
	b := h.signedIn("sam", models.RoleSupport)
	p := b.get("/refusals")
	var toolsShown []string
	p.doc.Find(`[data-testid="refusal-tool"]`).Each(func(_ int, s *goquery.Selection) { toolsShown = append(toolsShown, s.Text()) })
	if strings.Join(toolsShown, ",") != "browser_type,browser_click,browser_open,fetch_url" {
		t.Fatalf("tool column %v", toolsShown)
	}
	if opts := p.doc.Find(`select[name="tool"]`).Text(); !strings.Contains(opts, "browser_open") || !strings.Contains(opts, "browser_type") {
		t.Fatalf("the tool filter lacks the browser tools: %q", opts)
	}
	filtered := b.get("/refusals?tool=browser_open")
	if ids := rowIDs(t, filtered); len(ids) != 1 || ids[0] != f.ids["open-other-site"] ||
		!strings.Contains(filtered.doc.Find(`[data-testid="refusal-host"]`).Text(), "other.example.net") {
		t.Fatalf("filter by browser_open: %v", ids)
	}
	d := b.get("/refusals/" + strconv.FormatInt(f.ids["page-request"], 10))
	if d.status != http.StatusOK || d.doc.Find(`[data-testid="detail-tool"]`).Text() != "browser_click" ||
		d.doc.Find(`[data-testid="detail-agent"]`).Text() != "vendor-bot" || strings.TrimSpace(d.doc.Find(`[data-testid="detail-thread"]`).Text()) != "mcp-session-1" ||
		!strings.Contains(d.doc.Find(`[data-testid="detail-via"]`).Text(), "browser proxy") {
		t.Fatalf("detail: %d %s", d.status, d.doc.Find("dl").Text())
	}
}
