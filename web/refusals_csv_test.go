package web

import (
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/outboundhq/outbound/models"
)

func TestRefusalCSVExportsTheFilteredView(t *testing.T) {
	h := newHarness(t)
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	names := []string{"other-host", "tricky", "formula", "other-code"}
	rows := []models.Refusal{
		{Time: at, Tool: "fetch_url", Host: "elsewhere.example", URL: "https://elsewhere.example/", Code: "forbidden"},
		{Time: at.Add(time.Minute), Tool: "fetch_url", Agent: "help, desk", Host: "intranet.corp", Port: 443,
			URL: `https://intranet.corp/a,b?q="x"`, Code: "forbidden", Reason: "internal_name",
			Message: "line one\nline two", Redirects: models.StringList{"https://a.example/", "https://intranet.corp/a,b"}},
		{Time: at.Add(2 * time.Minute), Tool: "take_screenshot", Proxied: true, Agent: "=HYPERLINK(\"http://evil.example\")", Host: "intranet.corp",
			URL: "https://intranet.corp/", Code: "forbidden", Thread: "+1-555", Trigger: "@import", Message: "-2+3"},
		{Time: at.Add(3 * time.Minute), Tool: "fetch_url", Host: "intranet.corp", URL: "https://intranet.corp/slow", Code: "timeout"},
	}
	f := seedLog(t, h, names, rows)
	if err := h.store.ReviewRefusal(t.Context(), f.ids["tricky"], models.StatusExpected, "\tcomment with a tab", "sam"); err != nil {
		t.Fatal(err)
	}
	b := h.signedIn("sam", models.RoleSupport)
	list := b.get("/refusals?host=intranet&code=forbidden")
	href := list.doc.Find(`[data-testid="refusals-csv"]`).AttrOr("href", "")
	if href != "/refusals.csv?code=forbidden&host=intranet" {
		t.Fatalf("export link %q", href)
	}
	p := b.get(href)
	if p.status != http.StatusOK {
		t.Fatalf("export: %d %s", p.status, p.body)
	}
	if ct := p.header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	wantName := `attachment; filename="refusals-` + time.Now().UTC().Format("2006-01-02") + `.csv"`
	if cd := p.header.Get("Content-Disposition"); cd != wantName {
		t.Errorf("Content-Disposition %q, want %q", cd, wantName)
	}
	if !strings.HasSuffix(p.body, "\r\n") || !strings.Contains(p.body, "\r\n") {
		t.Error("records do not end in CRLF as RFC 4180 asks")
	}
	if !strings.Contains(p.body, `"https://intranet.corp/a,b?q=""x"""`) {
		t.Errorf("a URL with a comma and quotes is not quoted per RFC 4180:\n%s", p.body)
	}
	recs, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], refusalCSVHeader) {
		t.Fatalf("header %q", recs[0])
	}
	col := func(rec []string, name string) string { return rec[slices.Index(refusalCSVHeader, name)] }
	var ids []string
	for _, rec := range recs[1:] {
		ids = append(ids, col(rec, "id"))
	}
	want := []string{strconv.FormatInt(f.ids["formula"], 10), strconv.FormatInt(f.ids["tricky"], 10)}
	if !slices.Equal(ids, want) {
		t.Fatalf("exported ids %q, want the filtered view newest first %q", ids, want)
	}
	formula, tricky := recs[1], recs[2]
	checks := []struct {
		name      string
		rec       []string
		col, want string
	}{
		{"formula agent", formula, "agent", `'=HYPERLINK("http://evil.example")`},
		{"plus thread", formula, "thread", "'+1-555"},
		{"at trigger", formula, "trigger", "'@import"},
		{"minus message", formula, "message", "'-2+3"},
		{"tab comment", tricky, "comment", "'\tcomment with a tab"},
		{"comma agent", tricky, "agent", "help, desk"},
		{"newline message", tricky, "message", "line one\nline two"},
		{"redirects in order", tricky, "redirects", "https://a.example/\nhttps://intranet.corp/a,b"},
		{"time", tricky, "time_utc", "2025-03-04T05:07:07Z"},
		{"status", tricky, "review_status", "expected"},
		{"no review yet", formula, "review_status", "unreviewed"},
		{"reviewer", tricky, "reviewed_by", "sam"},
		{"port", tricky, "port", "443"},
		{"a proxied request", formula, "proxied", "true"},
		{"a tool call", tricky, "proxied", "false"},
	}
	for _, c := range checks {
		if got := col(c.rec, c.col); got != c.want {
			t.Errorf("%s: %s = %q, want %q", c.name, c.col, got, c.want)
		}
	}
}

func TestRefusalCSVStreamsEveryRow(t *testing.T) {
	h := newHarness(t)
	const total = models.MaxRefusalPage*2 + 7 // more than one store page
	rows := make([]models.Refusal, total)
	names := make([]string, total)
	for i := range rows {
		rows[i] = models.Refusal{Time: past.Add(time.Duration(i) * time.Second), Host: "h.example", Code: "forbidden"}
		names[i] = strconv.Itoa(i)
	}
	if err := h.store.InsertRefusals(t.Context(), rows); err != nil {
		t.Fatal(err)
	}
	resp, err := h.signedIn("sam", models.RoleSupport).client.Get(h.srv.URL + "/refusals.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	recs, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != total+1 {
		t.Errorf("export has %d records, want %d rows and a header", len(recs), total)
	}
	seen := map[string]bool{}
	for _, rec := range recs[1:] {
		if seen[rec[0]] {
			t.Fatalf("refusal %s exported twice", rec[0])
		}
		seen[rec[0]] = true
	}
}

func TestRefusalCSVRefusesBadFilters(t *testing.T) {
	h := newHarness(t)
	oneRefusal(t, h, fullRefusal)
	p := h.signedIn("sam", models.RoleSupport).get("/refusals.csv?from=tomorrow&code=forbidden")
	if p.status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", p.status)
	}
	if !strings.Contains(p.body, `from: &#34;tomorrow&#34; is not a date or time`) && !strings.Contains(p.body, `from: &quot;tomorrow&quot; is not a date or time`) {
		t.Errorf("the error does not name the bad filter:\n%s", p.body)
	}
	if strings.Contains(p.body, fullRefusal.URL) || p.header.Get("Content-Disposition") != "" {
		t.Error("a refused export still sent data")
	}
}

func TestSpreadsheetSafe(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"plain", "fetch_url", "fetch_url"},
		{"equals", "=1+1", "'=1+1"},
		{"plus", "+1", "'+1"},
		{"minus", "-1", "'-1"},
		{"at", "@SUM(A1)", "'@SUM(A1)"},
		{"tab", "\t=1", "'\t=1"},
		{"carriage return", "\r=1", "'\r=1"},
		{"inner equals", "a=b", "a=b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spreadsheetSafe(tt.in); got != tt.want {
				t.Errorf("spreadsheetSafe(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
