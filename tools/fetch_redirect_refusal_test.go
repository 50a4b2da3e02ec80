package tools

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// A public page that redirects into the network is refused on the hop; the
// agent's text, the refusal value and the API's JSON all name the redirect
// chain, because the guard hands the refusal back already stamped.
func TestFetchRefusedRedirectNamesTheChainInTheAnswer(t *testing.T) {
	e := newToolEnv(t)
	e.serve(t, "short.example.com", "93.184.216.36", http.RedirectHandler("http://10.0.0.1/admin", http.StatusFound))
	res := e.call(t, FetchURLName, turnA, `{"url": "http://short.example.com/s/abc"}`)
	if res.OK() {
		t.Fatalf("redirect into the network was not refused: %+v", res)
	}
	chain := []string{"http://short.example.com/s/abc"}
	if !slices.Equal(res.Refusal.Redirects, chain) {
		t.Fatalf("refusal redirects %q, want %q", res.Refusal.Redirects, chain)
	}
	if !strings.Contains(res.Text, "Redirected from http://short.example.com/s/abc to http://10.0.0.1/admin.\n") {
		t.Fatalf("the agent's answer does not name the redirect chain:\n%s", res.Text)
	}
	if res.Refusal.Tool != FetchURLName || res.Refusal.Agent != turnA.Agent || res.Refusal.Port != 80 {
		t.Fatalf("refusal not stamped with the caller and port: %+v", res.Refusal)
	}
	raw, err := json.Marshal(res.API)
	if err != nil {
		t.Fatal(err)
	}
	var api struct {
		Answer string `json:"answer"`
		Error  struct {
			Redirects []string `json:"redirects"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &api); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(api.Error.Redirects, chain) || api.Answer != res.Text {
		t.Fatalf("API JSON redirects %q answer:\n%s\nwant %q and the agent's text", api.Error.Redirects, api.Answer, chain)
	}
	if dials := e.dialer.Dials(); slices.ContainsFunc(dials, func(d string) bool { return strings.HasPrefix(d, "10.0.0.1") }) {
		t.Fatalf("dialled the internal address: %v", dials)
	}
	reports := e.Reports()
	if len(reports) != 1 || !slices.Equal(reports[0].Redirects, chain) || reports[0].Refusal != res.Refusal {
		t.Fatalf("want one refusal record with the chain, carrying the answered value; got %+v", reports)
	}
}
