package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/outboundhq/outbound/internal/browsertest"
)

// TestToolCommandScreenshotFlags: take_screenshot is served by console
// tool, its image needs --out, and --out is refused for a tool that
// answers no image; a usage mistake runs no tool and writes no file.
func TestToolCommandScreenshotFlags(t *testing.T) {
	db := existingDB(t)
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	r := runCLI(t, "tool", "--db", db, "take_screenshot", `{"url": "https://status.example.com/"}`)
	if r.code != 2 || !strings.Contains(r.stderr, "--out FILE.png") {
		t.Fatalf("take_screenshot without --out: %+v", r)
	}
	r = runCLI(t, "tool", "--db", db, "--out", shot, "fetch_url", `{"url": "https://status.example.com/"}`)
	if r.code != 2 || !strings.Contains(r.stderr, "--out") || !strings.Contains(r.stderr, "fetch_url answers none") {
		t.Fatalf("--out for fetch_url: %+v", r)
	}
	r = runCLI(t, "tool", "--db", db, "--out", filepath.Join(dir, "missing", "shot.png"), "take_screenshot", `{"url": "https://status.example.com/"}`)
	if r.code != 2 || !strings.Contains(r.stderr, "does not exist") {
		t.Fatalf("--out in a missing folder: %+v", r)
	}
	if r := runCLI(t, "tool", "--db", db, "no_such_tool"); r.code != 2 || !strings.Contains(r.stderr, "take_screenshot") || strings.Contains(r.stderr, "runs under") {
		t.Fatalf("an unknown tool must list take_screenshot as served: %+v", r)
	}
	// A refused screenshot answers like any tool: exit 3, a refusal row,
	// no file, and no browser needed.
	r = runCLI(t, "tool", "--db", db, "--out", shot, "take_screenshot", `{"url": "http://169.254.169.254/latest/meta-data/"}`)
	if r.code != 3 || !strings.Contains(r.stdout, "take_screenshot was refused: forbidden (metadata)") {
		t.Fatalf("a refused screenshot: %+v", r)
	}
	if _, err := os.Stat(shot); !os.IsNotExist(err) {
		t.Fatalf("a refused screenshot left a file: %v", err)
	}
	r = runCLI(t, "refusals", "--json", "--db", db)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0]["tool"] != "take_screenshot" {
		t.Fatalf("the refusal log after the refused screenshot: %v %s", err, r.stdout)
	}
}

// TestToolCommandTakesAScreenshot: console tool take_screenshot loads the
// page in the guarded browser and writes the PNG to --out.
func TestToolCommandTakesAScreenshot(t *testing.T) {
	browsertest.Require(t)
	db := existingDB(t)
	srv := loopbackPage(t, `<title>Status</title><body style="background:#2458d3"><h1>All good</h1></body>`)
	if r := runCLI(t, "allow", "add", "--db", db, strings.TrimPrefix(srv.URL, "http://")); r.code != 0 {
		t.Fatal(r)
	}
	shot := filepath.Join(t.TempDir(), "status.png")
	r := runCLI(t, "tool", "--db", db, "--out", shot, "take_screenshot", `{"url": "`+srv.URL+`/", "width": 640, "height": 480}`)
	if r.code != 0 || !strings.Contains(r.stdout, `Screenshot of `+srv.URL+`/, titled "Status", 640×480 pixels.`) || !strings.Contains(r.stdout, "Wrote the image to "+shot) {
		t.Fatalf("take_screenshot: %+v", r)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 640 || cfg.Height != 480 {
		t.Fatalf("the file is not a 640×480 PNG: %v %+v", err, cfg)
	}
}
