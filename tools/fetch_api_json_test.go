package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/outboundhq/outbound/internal/jsonout/jsontest"
	"github.com/outboundhq/outbound/tools/extract"
)

// The API's fetch_url answer, each field set alone and all together, reads
// as encoding/json's: a field added to FetchResponse (or guard.Refusal)
// and not to appendJSON fails here.
func TestFetchResponseJSONIsEncodingJSONs(t *testing.T) {
	check := func(what string, r FetchResponse) {
		t.Helper()
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		jsontest.ReadsAlike(t, what, r.appendJSON(nil), want)
	}
	check("zero", FetchResponse{})
	check("no links", FetchResponse{Links: []extract.Link{}})
	rt := reflect.TypeFor[FetchResponse]()
	for i := range rt.NumField() {
		var r FetchResponse
		jsontest.Fill(t, rt.Field(i).Name, reflect.ValueOf(&r).Elem().Field(i))
		check(rt.Field(i).Name+" alone", r)
	}
	var all FetchResponse
	jsontest.Fill(t, "all", reflect.ValueOf(&all).Elem())
	check("every field", all)
}
