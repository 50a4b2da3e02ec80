package tools

import (
	"encoding/json"
	"strconv"

	"github.com/outboundhq/outbound/internal/jsonout"
)

// appendJSON appends the answer as encoding/json writes a FetchResponse.
// Every fetch_url call over the API writes one, most of them refusals of
// a URL from a hostile page at the rate a flood sends them, and the
// reflective encoder was the API's largest cost after the guard itself.
// TestFetchResponseJSONIsEncodingJSONs fills every field and compares.
func (r FetchResponse) appendJSON(b []byte) []byte {
	b = append(b, `{"ok":`...)
	b = strconv.AppendBool(b, r.OK)
	if r.Error != nil {
		b = append(b, `,"error":`...)
		b = jsonout.AppendRefusal(b, r.Error)
	}
	str := func(key, s string) {
		if s != "" {
			b = append(b, key...)
			b = jsonout.AppendString(b, s)
		}
	}
	str(`,"url":`, r.URL)
	str(`,"redirected_from":`, r.RedirectedFrom)
	if r.Status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(r.Status), 10)
	}
	str(`,"title":`, r.Title)
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, int64(r.Start), 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, int64(r.End), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(r.Total), 10)
	b = append(b, `,"next_start":`...)
	if r.NextStart == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*r.NextStart), 10)
	}
	b = append(b, `,"text":`...)
	b = jsonout.AppendString(b, r.Text)
	b = append(b, `,"links":`...)
	switch {
	case r.Links == nil:
		b = append(b, "null"...)
	case len(r.Links) == 0:
		b = append(b, "[]"...)
	default:
		// Only a page that was read has links: the encoder's cost is
		// small beside the fetch's.
		links, _ := json.Marshal(r.Links) // plain strings and booleans always encode
		b = append(b, links...)
	}
	if r.ScriptDrawn {
		b = append(b, `,"script_drawn":true`...)
	}
	b = append(b, `,"answer":`...)
	b = jsonout.AppendString(b, r.Answer)
	return append(b, '}')
}
