package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/outboundhq/outbound/guard"
)

const browserFindDescription = `Find a word or phrase in the page open in this conversation's browser tab (any case), for pages whose text was cut. Answers the lines where it occurs, with the refs on them; like every browser answer, it hands out new refs.`

// maxFindLength bounds what browser_find looks for.
const maxFindLength = 200

// BrowserFindTool is browser_find.
func BrowserFindTool(t *Tabs) Tool {
	return Tool{
		Name:        BrowserFindName,
		Title:       "Find text in the open page",
		Description: browserFindDescription,
		Schema: object([]string{"text"}, map[string]*jsonschema.Schema{
			"text": text("The word or phrase to find, e.g. price or Contact us.", maxFindLength),
		}),
		Effect:  EffectRead,
		Example: `{"text": "price"}`,
		Run: func(ctx context.Context, turn Turn, args map[string]json.RawMessage) Result {
			var in struct {
				Text string `json:"text"`
			}
			if err := decodeArgs(args, &in); err != nil {
				return inputRefusal(BrowserFindName, err)
			}
			if strings.TrimSpace(in.Text) == "" {
				return browserRefused(BrowserFindName, &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonBadParams,
					Message: "There is nothing to find: the text is empty.", Fix: `Pass a word or phrase, e.g. {"text": "price"}.`})
			}
			return t.onOpenTab(ctx, BrowserFindName, turn, false, func(tb *tab, set Settings) Result {
				return tb.answer(BrowserFindName, set, 0, in.Text)
			})
		},
	}
}
