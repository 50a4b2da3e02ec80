package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAPageOfRefusedImagesIsOneRow (issue 9, finding 8): a page with 200
// images at internal addresses makes one decision record per request,
// each counted and logged, but the refusal log gets at most two rows for
// the call (one standing for all the refused requests, with their count
// and hosts, and the call's own if it was refused), and the agent is told
// how many of the page's requests were refused.
func TestAPageOfRefusedImagesIsOneRow(t *testing.T) {
	launch := realChromium(t)
	const images = 200
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Gallery</title><h1>Gallery</h1>`)
		for i := range images {
			fmt.Fprintf(w, `<img src="http://10.0.0.%d/img/%d.png" width="4" height="4">`, 1+i%4, i)
		}
	}))
	defer page.Close()
	// The images load in parallel, so the hosts are named in any order.
	namesHosts := func(s string) bool {
		for i := 1; i <= 4; i++ {
			if !strings.Contains(s, fmt.Sprintf("10.0.0.%d", i)) {
				return false
			}
		}
		return true
	}
	e := newShotEnv(t, launch, strings.TrimPrefix(page.URL, "http://"))
	res := e.call(t, Turn{Agent: "helpdesk", Thread: "T-8"}, fmt.Sprintf(`{"url": %q}`, page.URL+"/"))
	if !res.OK() {
		t.Fatalf("screenshot refused: %+v", res.Refusal)
	}
	refused, rows := 0, 0
	for _, rec := range e.Records() {
		if rec.Refusal == nil {
			continue
		}
		if rec.Proxied && strings.HasPrefix(rec.URL, "http://10.0.0.") {
			refused++
		}
		if !rec.Burst {
			rows++
			if rec.Caller.Agent != "helpdesk" || rec.Caller.Thread != "T-8" ||
				!strings.Contains(rec.Note, fmt.Sprintf("refused %d requests in all, on 4 hosts (", images)) || !namesHosts(rec.Note) {
				t.Errorf("the call's row: %+v note %q", rec.Caller, rec.Note)
			}
		}
	}
	if refused != images {
		t.Fatalf("%d proxied records of refused images, want one per request (%d)", refused, images)
	}
	if rows < 1 || rows > 2 {
		t.Fatalf("%d refusal-log rows for one call, want one standing for the %d refused requests", rows, images)
	}
	want := fmt.Sprintf("The policy refused %d of the page's requests, on 4 hosts (", images)
	if !strings.Contains(res.Text, want) || !namesHosts(res.Text) {
		t.Fatalf("the agent reads %q\nwant it to say %q", res.Text, want)
	}
}
