package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/playwright-community/playwright-go"

	"github.com/outboundhq/outbound/guard"
)

const browserTypeDescription = `Type text into a field of the open page by its ref from the latest browser answer, replacing what the field held. For a list (select), it chooses the option with that text.
It does not press Enter: to submit, click the form's button. Typing needs a person's confirmation.`

// maxTypeLength bounds what browser_type types.
const maxTypeLength = 4000

// BrowserTypeTool is browser_type.
func BrowserTypeTool(t *Tabs) Tool {
	return Tool{
		Name:        BrowserTypeName,
		Title:       "Type into a field of the open page",
		Description: browserTypeDescription,
		Schema: object([]string{"ref", "text"}, map[string]*jsonschema.Schema{
			"ref":  text("The field's ref from the latest browser answer, e.g. e5.", maxRefLength),
			"text": text("What the field should hold; it replaces the field's value.", maxTypeLength),
		}),
		Effect:  EffectWrite,
		Example: `{"ref": "e5", "text": "support@example.com"}`,
		Run: func(ctx context.Context, turn Turn, args map[string]json.RawMessage) Result {
			var in struct {
				Ref  string `json:"ref"`
				Text string `json:"text"`
			}
			if err := decodeArgs(args, &in); err != nil {
				return inputRefusal(BrowserTypeName, err)
			}
			return t.onOpenTab(ctx, BrowserTypeName, turn, true, func(tb *tab, set Settings) Result {
				return tb.typeInto(set, in.Ref, in.Text)
			})
		},
	}
}

// typeInto replaces the value of ref's field with text, once a person
// has confirmed exactly what goes where.
func (tb *tab) typeInto(set Settings, ref, text string) Result {
	el, info, r := tb.element(BrowserTypeName, ref)
	if r != nil {
		return browserRefused(BrowserTypeName, r)
	}
	notField := func(msg, fix string) Result {
		return browserRefused(BrowserTypeName, &guard.Refusal{Code: guard.CodeInvalid, Reason: ReasonNotAField, Kind: guard.KindPolicy, URL: tb.page.URL(),
			Message: msg, Fix: fix})
	}
	switch {
	case !info.Editable && !info.Select:
		return notField(fmt.Sprintf("The element %s (%s, %s) takes no typing.", ref, info.Label, info.Kind), "Click it with "+BrowserClickName+", or type into a field's ref.")
	case info.Disabled || info.ReadOnly:
		return notField(fmt.Sprintf("The field %s (%s) is disabled or read-only.", ref, info.Label), refFix)
	}
	what := fmt.Sprintf("type %q into the field %s", text, info.Label)
	if info.Select {
		what = fmt.Sprintf("choose %q in the list %s", text, info.Label)
	}
	if r := tb.tabs.confirm(tb.ask(), SideEffect{Tool: BrowserTypeName, What: what, Where: tb.page.URL()}); r != nil {
		return browserRefused(BrowserTypeName, r)
	}
	ms := float64(clickTimeout / time.Millisecond)
	var err error
	if info.Select {
		_, err = el.SelectOption(playwright.SelectOptionValues{Labels: &[]string{text}}, playwright.ElementHandleSelectOptionOptions{Timeout: &ms})
		if err != nil {
			_, err = el.SelectOption(playwright.SelectOptionValues{Values: &[]string{text}}, playwright.ElementHandleSelectOptionOptions{Timeout: &ms})
		}
	} else {
		err = el.Fill(text, playwright.ElementHandleFillOptions{Timeout: &ms})
	}
	if err != nil {
		if tb.crashed(err) {
			return browserRefused(BrowserTypeName, tabBrowserRefusal(BrowserTypeName, "", err))
		}
		return notField(fmt.Sprintf("The field %s could not take the text: %s.", ref, firstLine(err.Error())), refFix)
	}
	tb.settle(set.Guard.Timeout)
	if r := tb.navigationOutcome(); r != nil {
		return browserRefused(BrowserTypeName, r)
	}
	return tb.answer(BrowserTypeName, set, 0, "")
}
