package tools

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/outboundhq/outbound/guard"
)

const takeScreenshotDescription = `Take a PNG screenshot of a web page, to see how it looks: a status page's colours, an error dialog, a layout problem.
The page loads in a browser whose every request is checked by the company's outbound policy; anything it may not reach does not load. Answers the image and one line with the final URL and title.`

// The viewport bounds of the schema: the widest and tallest the settings
// may ever allow. The settings in force may allow less; a size within
// these bounds but over the settings is the tool's bad_size refusal.
const (
	shotMinSide   = 100
	shotMaxWidth  = 3840
	shotMaxHeight = 2160
)

// ScreenshotTool is take_screenshot as a registry value.
func ScreenshotTool(s *Screenshotter) Tool {
	return Tool{
		Name:        TakeScreenshotName,
		Title:       "Screenshot a web page",
		Description: takeScreenshotDescription,
		Schema: object(nil, map[string]*jsonschema.Schema{
			"url":       text("The http or https URL of the page to photograph.", maxURLLength),
			"tab":       {Type: "boolean", Description: "Photograph this conversation's open browser tab (opened with browser_open) instead of a URL; leave url out."},
			"full_page": {Type: "boolean", Description: "Capture the whole page rather than the first screen; long pages are cut at the configured length."},
			"width":     bounded("integer", "Viewport width in pixels (default 1280).", ptr(float64(shotMinSide)), ptr(float64(shotMaxWidth))),
			"height":    bounded("integer", "Viewport height in pixels (default 800).", ptr(float64(shotMinSide)), ptr(float64(shotMaxHeight))),
		}),
		Effect:  EffectRead,
		Example: `{"url": "https://status.example.com/", "full_page": false, "width": 1280, "height": 800}`,
		Run: func(ctx context.Context, turn Turn, args map[string]json.RawMessage) Result {
			var in ScreenshotInput
			if err := decodeArgs(args, &in); err != nil {
				return inputRefusal(TakeScreenshotName, err)
			}
			if (in.URL == "") == !in.Tab {
				return inputRefusal(TakeScreenshotName, &InputError{Message: "The input needs either a url, or tab: true for this conversation's open browser tab, and not both.",
					Fix: `Send {"url": "https://status.example.com/"}, or {"tab": true} after browser_open.`})
			}
			res := s.Take(ctx, turn, in)
			out := Result{Refusal: res.Refusal, Text: res.Caption(), PNG: res.PNG, API: res.JSON(), URL: res.URL}
			return out
		},
	}
}

// ScreenshotResponse is the API's answer; png is base64 in JSON. A
// refusal is a result: ok is false and error carries the guard's value,
// as an agent may read it (guard.Refusal.ForAgent).
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

// JSON returns the result in the API's shape.
func (r *ShotResult) JSON() ScreenshotResponse {
	return ScreenshotResponse{OK: r.OK(), Error: r.Refusal.ForAgent(), URL: r.URL, Title: r.Title,
		Width: r.Width, Height: r.Height, Cut: r.Cut, PNG: r.PNG, Caption: r.Caption()}
}
