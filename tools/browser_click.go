package tools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/guard"
)

const browserClickDescription = `Click a link, button or other element of the open page by its ref from the latest browser answer, e.g. e12. Answers the page as it is after the click, with new refs.
Clicking a button that submits a form sends what the form holds: that needs a person's confirmation. Links to other sites are refused.`

// clickTimeout bounds the wait for an element to become clickable.
const clickTimeout = 5 * time.Second

// BrowserClickTool is browser_click.
func BrowserClickTool(t *Tabs) Tool {
	return Tool{
		Name:        BrowserClickName,
		Title:       "Click an element of the open page",
		Description: browserClickDescription,
		Schema: object([]string{"ref"}, map[string]*jsonschema.Schema{
			"ref": text("The element's ref from the latest browser answer, e.g. e12.", maxRefLength),
		}),
		Effect:  EffectWrite,
		Example: `{"ref": "e12"}`,
		Run: func(ctx context.Context, turn Turn, args map[string]json.RawMessage) Result {
			var in struct {
				Ref string `json:"ref"`
			}
			if err := decodeArgs(args, &in); err != nil {
				return inputRefusal(BrowserClickName, err)
			}
			return t.onOpenTab(ctx, BrowserClickName, turn, true, func(tb *tab, set Settings) Result {
				return tb.click(set, in.Ref)
			})
		},
	}
}

// click clicks ref. A click that submits a form is put to a person first;
// once confirmed, the page may send that form's request to its own site.
// Any other request that may change something, which the click makes the
// page send, is put to a person by the route as it happens.
func (tb *tab) click(set Settings, ref string) Result {
	el, info, r := tb.element(BrowserClickName, ref)
	if r != nil {
		return browserRefused(BrowserClickName, r)
	}
	if info.Disabled {
		return browserRefused(BrowserClickName, &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonNotAField, Kind: guard.KindPolicy, URL: tb.page.URL(),
			Message: "The element " + ref + " (" + info.Label + ") is disabled; clicking it does nothing.", Fix: "Fill in what the page asks for first, then " + refFix})
	}
	if info.Submits {
		if r := tb.tabs.confirm(tb.ask(), SideEffect{Tool: BrowserClickName, What: info.submission(), Where: info.Action}); r != nil {
			return browserRefused(BrowserClickName, r)
		}
		tb.allowWrites()
	}
	ms := float64(clickTimeout / time.Millisecond)
	if err := el.Click(playwright.ElementHandleClickOptions{Timeout: &ms}); err != nil {
		if tb.crashed(err) {
			return browserRefused(BrowserClickName, tabBrowserRefusal(BrowserClickName, "", err))
		}
		return browserRefused(BrowserClickName, &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonStaleRef, Kind: guard.KindPolicy, URL: tb.page.URL(),
			Message: "The element " + ref + " could not be clicked: " + firstLine(err.Error()) + ".", Fix: refFix})
	}
	tb.settle(set.Guard.Timeout)
	if r := tb.navigationOutcome(); r != nil {
		return browserRefused(BrowserClickName, r)
	}
	return tb.answer(BrowserClickName, set, 0, "")
}

// ask is the context in which the current call may put a side effect to a
// person.
func (tb *tab) ask() context.Context {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.askCtx == nil {
		return context.Background()
	}
	return tb.askCtx
}

// allowWrites lets the page send the confirmed submission to its site.
func (tb *tab) allowWrites() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.writes = true
}
