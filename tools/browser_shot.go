package tools

import (
	"context"

	"github.com/outboundhq/outbound/guard"
)

// Shot is take_screenshot of the conversation's open tab: the page as the
// browser tools left it, in the viewport size asked for.
func (t *Tabs) Shot(ctx context.Context, turn Turn, in ScreenshotInput) ShotResult {
	if t == nil {
		return ShotResult{Refusal: &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonNoTab, Kind: guard.KindPolicy, Tool: TakeScreenshotName,
			Message: "There is no browser tab to photograph here: the browser tools do not run in this process.", Fix: "Pass a url instead of tab."}}
	}
	var out ShotResult
	res := t.onOpenTab(ctx, TakeScreenshotName, turn, false, func(tb *tab, set Settings) Result {
		w, h, bad := shotSize(in, set, t.shots.guard.Wording())
		if bad != nil {
			out.Refusal = bad
			return Result{Refusal: bad}
		}
		if w != defaultShotWidth || h != defaultShotHeight {
			if err := tb.page.SetViewportSize(w, h); err != nil {
				out.Refusal = tabBrowserRefusal(TakeScreenshotName, tb.page.URL(), err)
				return Result{Refusal: out.Refusal}
			}
			defer tb.page.SetViewportSize(defaultShotWidth, defaultShotHeight)
		}
		png, height, cut, err := capture(tb.page, w, h, in.FullPage, set)
		if err != nil {
			tb.crashed(err)
			out.Refusal = tabBrowserRefusal(TakeScreenshotName, tb.page.URL(), err)
			return Result{Refusal: out.Refusal}
		}
		title, _ := tb.page.Title()
		out = ShotResult{PNG: png, URL: tb.page.URL(), Title: title, Width: w, Height: height, Cut: cut}
		return Result{}
	})
	if res.Refusal != nil {
		return ShotResult{Refusal: res.Refusal}
	}
	return out
}
