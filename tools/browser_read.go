package tools

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

const browserReadDescription = `Read the page open in this conversation's browser tab again, as it is now (after a script changed it, say), with new refs for its links, buttons and fields. Refs from earlier answers stop working.`

// BrowserReadTool is browser_read.
func BrowserReadTool(t *Tabs) Tool {
	return Tool{
		Name:        BrowserReadName,
		Title:       "Read the open page again",
		Description: browserReadDescription,
		Schema:      object(nil, map[string]*jsonschema.Schema{}),
		Effect:      EffectRead,
		Example:     `{}`,
		Run: func(ctx context.Context, turn Turn, _ map[string]json.RawMessage) Result {
			return t.onOpenTab(ctx, BrowserReadName, turn, false, func(tb *tab, set Settings) Result {
				return tb.answer(BrowserReadName, set, 0, "")
			})
		},
	}
}
