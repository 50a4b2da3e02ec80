package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/models"
)

// TestDocsScreenshotsOverviewAndPreview makes the user guide's pictures of
// the Overview and the safe preview, at 1440 and 390 px. The last hour's
// refusals are real refused calls through the JSON API; the 30 days of
// history before them are written straight into the database (nothing
// else can date a refusal in the past). Regenerate with
//
//	OUTBOUND_DOCS_SCREENSHOTS=1 go test ./e2e -run TestDocsScreenshotsOverviewAndPreview
//
// and look at every image before committing it.
func TestDocsScreenshotsOverviewAndPreview(t *testing.T) {
	if os.Getenv(docsScreenshotsEnv) != "1" {
		t.Skipf("writes docs/images; regenerate with %s=1", docsScreenshotsEnv)
	}
	c, ada := adminConsole(t)
	seedHistory(t, c.db)
	site := serveCounting(t, htmlPage(`<!doctype html><html><head><title>Parcel Hub status</title></head>
<body style="font-family: sans-serif; margin: 2rem 3rem; color: #1d2939"><h1 style="color:#12805c">✔ All systems operational</h1>
<p>Tracking, label printing and pickups have been running normally since 06:00 UTC. The delay in tracking updates reported on Monday was fixed at 14:20 UTC.</p>
<table style="border-collapse: collapse; min-width: 24rem"><tr><td style="padding:.4rem 1rem .4rem 0">Tracking API</td><td style="color:#12805c">Operational</td></tr>
<tr><td style="padding:.4rem 1rem .4rem 0">Label printing</td><td style="color:#12805c">Operational</td></tr>
<tr><td style="padding:.4rem 1rem .4rem 0">Pickups</td><td style="color:#12805c">Operational</td></tr></table>
<p>Questions? Write to <a href="mailto:support@parcelhub.example">support@parcelhub.example</a>.</p></body></html>`))
	mustGoto(t, ada, c.url+"/integrations")
	addEntries(t, ada, "status.example.com\n"+hostPort(site.URL), "Carrier status pages")
	see(t, ada, `[data-testid="flash"]`, "Added 2 entries")

	bots := map[string]string{}
	for _, a := range []string{"helpdesk-bot", "billing-agent", "triage-agent"} {
		bots[a] = c.createToken(a)
	}
	var out fetchAnswer
	for _, call := range []struct{ agent, url string }{
		{"helpdesk-bot", "http://169.254.169.254/latest/meta-data/iam/security-credentials/"},
		{"helpdesk-bot", "http://10.0.0.12/wp-admin/"},
		{"helpdesk-bot", "http://0x7f000001/"},
		{"helpdesk-bot", "http://localhost:6379/"},
		{"triage-agent", "http://192.168.1.1/cgi-bin/luci"},
		{"helpdesk-bot", "http://10.20.0.31:8080/tickets/HD-4820"},
		{"helpdesk-bot", "http://169.254.169.254/latest/user-data"},
		{"triage-agent", "https://pastebin.com/raw/8sK2xQ"},
		{"billing-agent", "ftp://files.example.com/invoices/2024-118.pdf"},
		{"helpdesk-bot", "https://tracking.parcelhub.example.net/T-99812"},
	} {
		c.callTool(bots[call.agent], "fetch_url", map[string]string{"url": call.url}, &out)
	}
	sam := c.addSupportUser("sam")
	gotoUntilCount(t, sam, c.url+"/refusals?from="+time.Now().UTC().Add(-time.Minute*5).Format("2006-01-02T15:04"), `[data-testid="refusal-row"]`, 10)

	for _, w := range []struct {
		width, height int
		suffix        string
	}{{docsWidth, docsHeight, ""}, {390, 844, "-390"}} {
		if err := sam.SetViewportSize(w.width, w.height); err != nil {
			t.Fatal(err)
		}
		mustGoto(t, sam, c.url+"/overview")
		see(t, sam, `[data-testid="total-attack"]`, "")
		docsShot(t, sam, "overview"+w.suffix+".png", w.width != docsWidth)

		mustGoto(t, sam, c.url+"/preview")
		fill(t, sam, `#preview-url`, site.URL+"/")
		fill(t, sam, `#preview-ticket`, "HD-4830")
		if err := sam.Locator(`[data-testid="preview-form"] button[type="submit"]`).Click(playwright.LocatorClickOptions{Timeout: playwright.Float(90_000)}); err != nil {
			t.Fatal(err)
		}
		see(t, sam, `[data-testid="preview-text"]`, "All systems operational")
		if err := sam.Locator(`[data-testid="preview-result"]`).ScrollIntoViewIfNeeded(); err != nil {
			t.Fatal(err)
		}
		docsShot(t, sam, "preview"+w.suffix+".png", w.width != docsWidth)
	}
}

func docsShot(t *testing.T, page playwright.Page, name string, full bool) {
	t.Helper()
	path := filepath.Join(docsImages, name)
	if _, err := page.Screenshot(playwright.PageScreenshotOptions{
		Path: playwright.String(path), FullPage: playwright.Bool(full),
		Animations: playwright.ScreenshotAnimationsDisabled, Caret: playwright.ScreenshotCaretHide,
	}); err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	t.Logf("wrote %s", path)
}

// seedHistory writes 30 days of plausible refusals before the last hour:
// mostly the policy's (hosts not on the allowlist), some network
// failures, a few attack-like ones, and one burst of probing.
func seedHistory(t *testing.T, db string) {
	t.Helper()
	s, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(4, 2))
	now := time.Now().UTC().Add(-time.Hour)
	policyHosts := []string{"pastebin.com", "tracking.parcelhub.example.net", "docs.google.com", "wetransfer.com", "bit.ly"}
	attack := []struct{ host, reason string }{{"169.254.169.254", "metadata"}, {"10.0.0.12", "internal_address"}, {"localhost", "internal_name"}}
	agents := []string{"helpdesk-bot", "billing-agent", "triage-agent"}
	var rows []models.Refusal
	for h := 30 * 24; h > 0; h-- {
		at := now.Add(-time.Duration(h) * time.Hour)
		busy := at.Hour() >= 7 && at.Hour() <= 18
		n := rng.IntN(2)
		if busy {
			n = 1 + rng.IntN(4)
		}
		for range n {
			host := policyHosts[rng.IntN(len(policyHosts))]
			rows = append(rows, models.Refusal{Time: at.Add(time.Duration(rng.IntN(3600)) * time.Second), Tool: "fetch_url", Host: host, URL: "https://" + host + "/x",
				Code: "forbidden", Reason: "not_allowlisted", Kind: "policy", Agent: agents[rng.IntN(len(agents))]})
		}
		if rng.IntN(9) == 0 {
			rows = append(rows, models.Refusal{Time: at, Tool: "take_screenshot", Host: "status.example.com", URL: "https://status.example.com/",
				Code: "unreachable", Reason: "dns", Kind: "network", Agent: "triage-agent"})
		}
		burst := h == 9*24+3
		if rng.IntN(14) == 0 || burst {
			k := 1
			if burst {
				k = 24
			}
			for range k {
				a := attack[rng.IntN(len(attack))]
				rows = append(rows, models.Refusal{Time: at.Add(time.Duration(rng.IntN(600)) * time.Second), Tool: "fetch_url", Host: a.host, URL: "http://" + a.host + "/",
					Code: "forbidden", Reason: a.reason, Kind: "policy", Agent: "helpdesk-bot"})
			}
		}
	}
	if err := s.InsertRefusals(context.Background(), rows); err != nil {
		t.Fatal(fmt.Errorf("seeding the history: %w", err))
	}
}
