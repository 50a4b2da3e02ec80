package e2e

import (
	"bytes"
	"image/png"
	"io"
	"net/http"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// smokePage has a heading, and a button whose inline script changes a line
// of text: enough to prove that pages load, scripts run and clicks land.
const smokePage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Outbound smoke</title></head>
<body>
<h1>Outbound browser smoke test</h1>
<p id="status">Not clicked yet</p>
<button type="button" id="press">Press me</button>
<script>
document.getElementById("press").addEventListener("click", function () {
	document.getElementById("status").textContent = "Clicked";
});
</script>
</body>
</html>`

// TestBrowserSmoke checks the whole browser path: driver, Chromium, page
// load, script, click, web-first assertions and a screenshot.
func TestBrowserSmoke(t *testing.T) {
	baseURL := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if _, err := io.WriteString(w, smokePage); err != nil {
			t.Errorf("write smoke page: %v", err)
		}
	}))
	page := newPage(t, baseURL)

	resp, err := page.Goto("/")
	if err != nil {
		t.Fatalf("open %s/: %v", baseURL, err)
	}
	if resp.Status() != http.StatusOK {
		t.Fatalf("open %s/: status %d, want %d", baseURL, resp.Status(), http.StatusOK)
	}

	if err := expect.Locator(page.Locator("h1")).ToHaveText("Outbound browser smoke test"); err != nil {
		t.Errorf("heading: %v", err)
	}
	status := page.Locator("#status")
	if err := expect.Locator(status).ToHaveText("Not clicked yet"); err != nil {
		t.Fatalf("status before the click: %v", err)
	}
	if err := page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Press me"}).Click(); err != nil {
		t.Fatalf("click the button: %v", err)
	}
	if err := expect.Locator(status).ToHaveText("Clicked"); err != nil {
		t.Fatalf("status after the click: %v", err)
	}

	shot, err := page.Screenshot()
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG (%d bytes): %v", len(shot), err)
	}
	if got := img.Bounds().Size(); got.X != viewportWidth || got.Y != viewportHeight {
		t.Errorf("screenshot is %dx%d, want the viewport %dx%d", got.X, got.Y, viewportWidth, viewportHeight)
	}
}
