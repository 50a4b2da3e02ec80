package tools

import (
	"net/http"
	"strings"

	"github.com/outboundhq/outbound/guard"
)

// screenshotRequest is the body of POST /api/v1/tools/take_screenshot.
type screenshotRequest struct {
	ScreenshotInput
	Thread  string `json:"thread"`
	Trigger string `json:"trigger"`
}

// ScreenshotResponse is the API's answer; png is base64 in JSON. A
// refusal is a result: ok is false and error carries the guard's value.
type ScreenshotResponse struct {
	OK      bool           `json:"ok"`
	Error   *guard.Refusal `json:"error,omitempty"`
	URL     string         `json:"url,omitempty"`
	Title   string         `json:"title,omitempty"`
	Width   int            `json:"width,omitempty"`
	Height  int            `json:"height,omitempty"`
	Cut     bool           `json:"cut,omitempty"`
	PNG     []byte         `json:"png,omitempty"`
	Caption string         `json:"caption"`
}

// ScreenshotAPI serves POST /api/v1/tools/take_screenshot.
func ScreenshotAPI(s *Screenshotter, agents Agents) http.Handler {
	return toolAPI(agents, func(w http.ResponseWriter, r *http.Request, agent string) {
		var req screenshotRequest
		if err := decodeBody(w, r, &req, `{"url": "https://status.example.com/", "full_page": false, "width": 1280, "height": 800, "thread": "T-1"}`); err != nil {
			WriteAPIError(w, err)
			return
		}
		if strings.TrimSpace(req.URL) == "" {
			WriteAPIError(w, &APIError{Status: http.StatusBadRequest, Code: "bad_request", Message: "The body has no url.", Fix: `Add "url": "https://…" to the body.`})
			return
		}
		res := s.Take(r.Context(), Turn{Agent: agent, Thread: req.Thread, Trigger: req.Trigger}, req.ScreenshotInput)
		writeJSON(w, http.StatusOK, ScreenshotResponse{OK: res.OK(), Error: res.Refusal, URL: res.URL, Title: res.Title,
			Width: res.Width, Height: res.Height, Cut: res.Cut, PNG: res.PNG, Caption: res.Caption()})
	})
}
