package tools

import (
	"io"
	"net/http"
	"testing"

	"github.com/outboundhq/outbound/guard"
)

// A fetch_url call that a report-only entry would refuse is read all the
// same, and its one record says what enforcing the entry would do; a call
// to the listed host carries no such mark, and another agent's call is
// not tried against the entry scoped to this one.
func TestFetchUnderReportOnlyEntryIsAllowedAndMarked(t *testing.T) {
	e := newToolEnv(t)
	article := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, articlePage)
	})
	e.serve(t, "news.example.org", "93.184.216.34", article)
	e.serve(t, "status.example.com", "93.184.216.35", article)
	rules := []guard.Rule{{Entry: mustParse(t, "status.example.com"), Scope: guard.Scope{Agents: []string{turnA.Agent}}, ReportOnly: true}}
	p, err := guard.NewPolicyRules(rules, e.Settings().Guard)
	if err != nil {
		t.Fatal(err)
	}
	e.guard.SetPolicy(p)

	if res := e.call(t, FetchURLName, turnA, `{"url": "http://news.example.org/"}`); res.Refusal != nil {
		t.Fatalf("a report-only entry refused the call: %s", res.Refusal.Message)
	}
	if res := e.call(t, FetchURLName, turnA, `{"url": "http://status.example.com/"}`); res.Refusal != nil {
		t.Fatal(res.Refusal.Message)
	}
	other := Turn{Agent: "other-bot", Thread: "T-2"}
	if res := e.call(t, FetchURLName, other, `{"url": "http://news.example.org/x"}`); res.Refusal != nil {
		t.Fatal(res.Refusal.Message)
	}
	recs := e.Records()
	if len(recs) != 3 {
		t.Fatalf("%d records, want one per call", len(recs))
	}
	if w := recs[0].WouldRefuse; recs[0].Refusal != nil || w == nil || w.Reason != guard.ReasonNotAllowlisted || w.Agent != turnA.Agent || w.Tool != FetchURLName {
		t.Fatalf("the unlisted host's record: %+v", recs[0])
	}
	if recs[1].WouldRefuse != nil || recs[2].WouldRefuse != nil {
		t.Fatalf("marked would-refuse: %+v / %+v", recs[1], recs[2])
	}
}

func mustParse(t *testing.T, s string) guard.Entry {
	t.Helper()
	e, err := guard.ParseEntry(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
