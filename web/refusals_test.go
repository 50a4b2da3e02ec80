package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

// past is a fixed day well before "today", so time filters have exact answers.
var past = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

// logFixture is a small log of varied refusals; ids maps a name to the ID
// the store gave it.
type logFixture struct {
	ids map[string]int64
}

// seedLog stores named refusals in the order given (later is newer).
func seedLog(t *testing.T, h *harness, names []string, rows []models.Refusal) logFixture {
	t.Helper()
	if err := h.store.InsertRefusals(t.Context(), rows); err != nil {
		t.Fatal(err)
	}
	all, _, err := h.store.ListRefusals(t.Context(), models.RefusalQuery{Limit: models.MaxRefusalPage})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(names) {
		t.Fatalf("seeded %d refusals, store has %d", len(names), len(all))
	}
	f := logFixture{ids: map[string]int64{}}
	for i, r := range all {
		f.ids[names[len(names)-1-i]] = r.ID
	}
	return f
}

// standardLog is the fixture most tests filter: names say what each is.
func standardLog(t *testing.T, h *harness) logFixture {
	t.Helper()
	at := func(d, hr int) time.Time { return past.AddDate(0, 0, d).Add(time.Duration(hr) * time.Hour) }
	names := []string{"intranet-old", "metadata", "intranet-exact", "evil-lookalike", "bad-scheme", "timeout", "shot-intranet"}
	rows := []models.Refusal{
		{Time: at(0, 9), Tool: "fetch_url", Agent: "helpdesk", Host: "intranet.corp", URL: "http://intranet.corp/wiki", Code: "forbidden", Reason: "internal_name"},
		{Time: at(1, 10), Tool: "fetch_url", Agent: "triage", Host: "169.254.169.254", URL: "http://169.254.169.254/latest/meta-data/", Code: "forbidden", Reason: "metadata"},
		{Time: at(2, 11), Tool: "fetch_url", Agent: "helpdesk", Host: "intranet.corp", URL: "https://intranet.corp/hr", Code: "forbidden", Reason: "not_allowlisted"},
		{Time: at(2, 15), Tool: "fetch_url", Agent: "helpdesk", Host: "intranet.corp.evil.example", URL: "https://intranet.corp.evil.example/x", Code: "forbidden", Reason: "internal_address"},
		{Time: at(3, 8), Tool: "fetch_url", Agent: "triage", Host: "", URL: "gopher://example.com/", Code: "invalid", Reason: "scheme"},
		{Time: at(4, 12), Tool: "fetch_url", Agent: "helpdesk", Host: "slow.example.com", URL: "https://slow.example.com/", Code: "timeout", Reason: "timeout"},
		{Time: at(5, 7), Tool: "take_screenshot", Agent: "helpdesk", Host: "intranet.corp", URL: "https://intranet.corp/", Code: "forbidden", Reason: "not_allowlisted"},
	}
	return seedLog(t, h, names, rows)
}

// rowIDs lists the refusal IDs of a log page, top to bottom.
func rowIDs(t *testing.T, p page) []int64 {
	t.Helper()
	var ids []int64
	p.doc.Find(`[data-testid="refusal-row"]`).Each(func(_ int, s *goquery.Selection) {
		id, err := strconv.ParseInt(s.AttrOr("data-id", ""), 10, 64)
		if err != nil {
			t.Fatalf("row without a numeric data-id: %v", err)
		}
		ids = append(ids, id)
	})
	return ids
}

func (f logFixture) want(names ...string) []int64 {
	out := make([]int64, len(names))
	for i, n := range names {
		out[i] = f.ids[n]
	}
	return out
}

func TestRefusalLogListsNewestFirst(t *testing.T) {
	h := newHarness(t)
	f := standardLog(t, h)
	p := h.signedIn("sam", models.RoleSupport).get("/refusals")
	if p.status != http.StatusOK {
		t.Fatalf("GET /refusals: %d", p.status)
	}
	want := f.want("shot-intranet", "timeout", "bad-scheme", "evil-lookalike", "intranet-exact", "metadata", "intranet-old")
	if got := rowIDs(t, p); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want newest first %v", got, want)
	}
	top := p.doc.Find(`[data-testid="refusal-row"]`).First()
	cells := top.Find("td").Map(func(_ int, s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") })
	wantCells := []string{"2025-03-06 07:00:00", "take_screenshot", "helpdesk", "—", "intranet.corp", "forbidden not_allowlisted", "https://intranet.corp/", "Unreviewed"}
	if !slices.Equal(cells, wantCells) {
		t.Errorf("top row cells %q, want %q", cells, wantCells)
	}
	if title := top.Find("td.refusal-url").AttrOr("title", ""); title != "https://intranet.corp/" {
		t.Errorf("URL cell title %q, want the full URL", title)
	}
	if href := top.Find("td.refusal-time a").AttrOr("href", ""); href != "/refusals/"+strconv.FormatInt(want[0], 10) {
		t.Errorf("row links to %q", href)
	}
	if got := p.doc.Find(`[data-testid="page-older"], [data-testid="page-newer"], [data-testid="page-first"]`).Length(); got != 0 {
		t.Errorf("one page of refusals shows %d pager links", got)
	}
	if txt := strings.Join(strings.Fields(p.doc.Find(`[data-testid="refusal-retention"]`).Text()), " "); txt != "Refusals are kept for 30 days." {
		t.Errorf("retention line %q", txt)
	}
	if p.doc.Find(`a[href="/settings"]`).Length() != 0 {
		t.Error("support is offered a link to change the retention setting")
	}
}

func TestRefusalLogFilters(t *testing.T) {
	h := newHarness(t)
	f := standardLog(t, h)
	ctx := t.Context()
	if err := h.store.ReviewRefusal(ctx, f.ids["metadata"], models.StatusExpected, "probe", "sam"); err != nil {
		t.Fatal(err)
	}
	if err := h.store.ReviewRefusal(ctx, f.ids["intranet-exact"], models.StatusNeedsAccess, "", "sam"); err != nil {
		t.Fatal(err)
	}
	b := h.signedIn("sam", models.RoleSupport)
	tests := []struct {
		name  string
		query url.Values
		want  []string
	}{
		{"code", url.Values{"code": {"timeout"}}, []string{"timeout"}},
		{"reason", url.Values{"reason": {"not_allowlisted"}}, []string{"shot-intranet", "intranet-exact"}},
		{"tool", url.Values{"tool": {"take_screenshot"}}, []string{"shot-intranet"}},
		{"agent", url.Values{"agent": {"triage"}}, []string{"bad-scheme", "metadata"}},
		{"host substring", url.Values{"host": {"intranet.corp"}}, []string{"shot-intranet", "evil-lookalike", "intranet-exact", "intranet-old"}},
		{"host substring ignores case", url.Values{"host": {"INTRANET.CORP.EVIL"}}, []string{"evil-lookalike"}},
		{"host exact in quotes", url.Values{"host": {`"intranet.corp"`}}, []string{"shot-intranet", "intranet-exact", "intranet-old"}},
		{"host exact is lower-cased", url.Values{"host": {`"Intranet.Corp"`}}, []string{"shot-intranet", "intranet-exact", "intranet-old"}},
		{"from a date", url.Values{"from": {"2025-03-05"}}, []string{"shot-intranet", "timeout"}},
		{"to a date takes the whole day", url.Values{"to": {"2025-03-02"}}, []string{"metadata", "intranet-old"}},
		{"datetime range", url.Values{"from": {"2025-03-03T11:00"}, "to": {"2025-03-03T14:59"}}, []string{"intranet-exact"}},
		{"to includes its minute", url.Values{"from": {"2025-03-03T11:00"}, "to": {"2025-03-03T15:00"}}, []string{"evil-lookalike", "intranet-exact"}},
		{"status needs access", url.Values{"status": {"needs_access"}}, []string{"intranet-exact"}},
		{"status expected", url.Values{"status": {"expected"}}, []string{"metadata"}},
		{"status unreviewed", url.Values{"status": {"unreviewed"}, "agent": {"triage"}}, []string{"bad-scheme"}},
		{"combined", url.Values{"code": {"forbidden"}, "host": {`"intranet.corp"`}, "from": {"2025-03-02"}, "agent": {"helpdesk"}}, []string{"shot-intranet", "intranet-exact"}},
		{"nothing matches", url.Values{"tool": {"take_screenshot"}, "status": {"reviewed"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.get("/refusals?" + tt.query.Encode())
			if p.status != http.StatusOK {
				t.Fatalf("status %d", p.status)
			}
			if got := rowIDs(t, p); !slices.Equal(got, f.want(tt.want...)) {
				t.Errorf("rows %v, want %v (%v)", got, f.want(tt.want...), tt.want)
			}
			form := p.doc.Find(`[data-testid="refusal-filters"]`)
			for key, vals := range tt.query {
				got := form.Find(`input[name="`+key+`"]`).AttrOr("value", "")
				if sel := form.Find(`select[name="` + key + `"] option[selected]`); sel.Length() > 0 {
					got = sel.AttrOr("value", "")
				}
				if key != "to" && key != "from" && got != vals[0] {
					t.Errorf("form shows %s=%q, want %q", key, got, vals[0])
				}
			}
			// The view is shareable: the export link carries every filter.
			csv, _ := url.Parse(p.doc.Find(`[data-testid="refusals-csv"]`).AttrOr("href", ""))
			for key := range tt.query {
				if csv.Query().Get(key) == "" {
					t.Errorf("export link %s drops the %s filter", csv, key)
				}
			}
			if len(tt.want) == 0 && p.doc.Find(`[data-testid="refusals-empty"]`).Length() != 1 {
				t.Error("an empty result has no explanation")
			}
		})
	}
}

func TestRefusalLogFilterFormNormalizesTimes(t *testing.T) {
	h := newHarness(t)
	p := h.signedIn("sam", models.RoleSupport).get("/refusals?from=2025-03-01&to=2025-03-02")
	form := p.doc.Find(`[data-testid="refusal-filters"]`)
	if got := form.Find(`input[name="from"]`).AttrOr("value", ""); got != "2025-03-01T00:00" {
		t.Errorf("from shows %q", got)
	}
	if got := form.Find(`input[name="to"]`).AttrOr("value", ""); got != "2025-03-02T23:59" {
		t.Errorf("a bare To date shows %q, want its last minute", got)
	}
	if !strings.Contains(form.Text(), "Times are UTC") {
		t.Error("the form does not say times are UTC")
	}
}

func TestRefusalLogBadFilterInput(t *testing.T) {
	h := newHarness(t)
	f := standardLog(t, h)
	b := h.signedIn("sam", models.RoleSupport)
	tests := []struct {
		name    string
		query   url.Values
		field   string
		message string
		// named is how the notice that replaces the rows names the
		// filters to fix; no row shows until they are.
		named string
	}{
		{"unparseable from", url.Values{"from": {"2025-13-01"}, "tool": {"take_screenshot"}}, "from", `"2025-13-01" is not a date or time`, "the From filter is"},
		{"unparseable to", url.Values{"to": {"yesterday"}, "code": {"timeout"}}, "to", "write it as 2025-03-01", "the To filter is"},
		{"to before from", url.Values{"from": {"2025-03-05"}, "to": {"2025-03-02"}}, "to", "is before From", "the To filter is"},
		{"unknown code", url.Values{"code": {"blocked"}, "agent": {"triage"}}, "code", `"blocked" is not a refusal code; choose one of invalid, forbidden`, "the Code filter is"},
		{"unknown status", url.Values{"status": {"done"}, "code": {"timeout"}}, "status", `"done" is not a review status`, "the Review filter is"},
		{"unmatched quote", url.Values{"host": {`"intranet.corp`}, "code": {"timeout"}}, "host", "unmatched double quote", "the Host filter is"},
		{"empty quotes", url.Values{"host": {`""`}, "code": {"timeout"}}, "host", "hold no host name", "the Host filter is"},
		{"overlong agent", url.Values{"agent": {strings.Repeat("a", 201)}, "code": {"timeout"}}, "agent", "at most 200 characters", "the Agent filter is"},
		{"two bad filters", url.Values{"code": {"blocked"}, "from": {"soon"}, "tool": {"take_screenshot"}}, "code", "is not a refusal code", "the Code and From filters are"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := b.get("/refusals?" + tt.query.Encode())
			if p.status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", p.status)
			}
			msg := p.doc.Find(`[data-testid="filter-error-` + tt.field + `"]`)
			if !strings.Contains(msg.Text(), tt.message) {
				t.Errorf("message next to %s is %q, want it to contain %q", tt.field, msg.Text(), tt.message)
			}
			if msg.Parent().Find(`[name="`+tt.field+`"]`).Length() != 1 {
				t.Errorf("the %s message is not next to its field", tt.field)
			}
			if got := rowIDs(t, p); len(got) != 0 {
				t.Errorf("rows %v shown under a filter that did not parse, want none", got)
			}
			if head := p.doc.Find("h2").Text(); strings.Contains(head, "All refusals") {
				t.Errorf("headings %q call an invalid filter's page All refusals", head)
			}
			if notice := p.doc.Find(`[data-testid="filter-problem"]`).Text(); !strings.Contains(notice, "No refusals are shown until "+tt.named+" fixed") {
				t.Errorf("notice = %q, want it to name %q", notice, tt.named)
			}
		})
	}
	t.Run("bad cursor", func(t *testing.T) {
		p := b.get("/refusals?before=abc&code=timeout")
		if !strings.Contains(p.doc.Find(`[data-testid="cursor-error"]`).Text(), `before="abc" is not a refusal ID`) {
			t.Errorf("no cursor message: %q", p.doc.Find(`[data-testid="cursor-error"]`).Text())
		}
		if got := rowIDs(t, p); !slices.Equal(got, f.want("timeout")) {
			t.Errorf("rows %v", got)
		}
	})
}

// Following Older to the end and Newer back must show every row exactly
// once, in order, with and without a filter.
func TestRefusalLogKeysetPages(t *testing.T) {
	h := newHarness(t)
	const total = 123
	rows := make([]models.Refusal, total)
	names := make([]string, total)
	for i := range rows {
		names[i] = strconv.Itoa(i)
		host := "a.example"
		if i%3 == 0 {
			host = "b.example"
		}
		rows[i] = models.Refusal{Time: past.Add(time.Duration(i) * time.Minute), Host: host, Code: "forbidden", Tool: "fetch_url"}
	}
	seedLog(t, h, names, rows)
	b := h.signedIn("sam", models.RoleSupport)
	tests := []struct {
		name      string
		start     string
		wantRows  int
		wantSizes []int
	}{
		{"everything", "/refusals", total, []int{50, 50, 23}},
		{"host filter", "/refusals?host=b.example", 41, []int{41}},
		{"host filter across pages", "/refusals?host=a.", 82, []int{50, 32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pages [][]int64
			seen := map[int64]bool{}
			link := tt.start
			for link != "" {
				p := b.get(link)
				ids := rowIDs(t, p)
				for i, id := range ids {
					if seen[id] {
						t.Fatalf("refusal %d shown on two pages", id)
					}
					if i > 0 && id >= ids[i-1] {
						t.Fatalf("page %s is not newest first: %v", link, ids)
					}
					seen[id] = true
				}
				if len(pages) > 0 && ids[0] >= pages[len(pages)-1][len(pages[len(pages)-1])-1] {
					t.Fatalf("page %s overlaps or precedes the previous page", link)
				}
				if len(pages) > 0 && p.doc.Find(`[data-testid="page-first"]`).AttrOr("href", "") != tt.start {
					t.Errorf("page %s has no link back to the newest page", link)
				}
				if strings.Contains(tt.start, "?") && !strings.Contains(p.doc.Find(`[data-testid="page-older"]`).AttrOr("href", tt.start), "host=") {
					t.Errorf("Older link drops the filter")
				}
				pages = append(pages, ids)
				link = p.doc.Find(`[data-testid="page-older"]`).AttrOr("href", "")
			}
			var sizes []int
			for _, pg := range pages {
				sizes = append(sizes, len(pg))
			}
			if len(seen) != tt.wantRows || !slices.Equal(sizes, tt.wantSizes) {
				t.Fatalf("saw %d rows in pages %v, want %d in %v", len(seen), sizes, tt.wantRows, tt.wantSizes)
			}
			// And back: Newer from the last page retraces the same pages.
			last := b.get(lastPageLink(t, b, tt.start))
			for i := len(pages) - 2; i >= 0; i-- {
				newer := last.doc.Find(`[data-testid="page-newer"]`).AttrOr("href", "")
				if newer == "" {
					t.Fatalf("page %d of %d has no Newer link", i+2, len(pages))
				}
				last = b.get(newer)
				if got := rowIDs(t, last); !slices.Equal(got, pages[i]) {
					t.Fatalf("Newer shows %v, want page %d %v", got, i+1, pages[i])
				}
			}
			if last.doc.Find(`[data-testid="page-newer"]`).Length() != 0 {
				t.Error("the newest page reached through Newer still offers Newer")
			}
		})
	}
}

// lastPageLink follows Older links from start and returns the last page's.
func lastPageLink(t *testing.T, b *browser, start string) string {
	t.Helper()
	link := start
	for {
		next := b.get(link).doc.Find(`[data-testid="page-older"]`).AttrOr("href", "")
		if next == "" {
			return link
		}
		link = next
	}
}

// Review finding: refusals today that name no host (an API refusal of a
// malformed URL) were counted in "Refusals today", yet the hosts card,
// which lists hosts only, said "No refusals yet today." next to the count.
func TestTodaysRefusalsWithoutAHostAreNotCalledNone(t *testing.T) {
	onEachEngine(t, func(t *testing.T, target string) {
		h := newHarnessOn(t, target, nil)
		admin := h.signedIn("ada", models.RoleAdmin)
		p := admin.get("/refusals")
		if today := strings.TrimSpace(p.doc.Find(`[data-testid="refusals-today"]`).Text()); today != "0" || !strings.Contains(p.body, "No refusals yet today.") {
			t.Fatalf("an empty log: %s refusals today, and the hosts card says %q; want 0 and \"No refusals yet today.\"", today, p.doc.Find(`section[aria-label="Today"]`).Text())
		}
		now := time.Now().UTC()
		if err := h.store.InsertRefusals(context.Background(), []models.Refusal{
			{Time: now.Add(-time.Second), Tool: "fetch_url", Agent: "bot", URL: "::bad", Code: "bad_url", Reason: "bad_url"},
			{Time: now.Add(-time.Second), Tool: "fetch_url", Agent: "bot", URL: "::bad", Code: "bad_url", Reason: "bad_url"},
		}); err != nil {
			t.Fatal(err)
		}
		p = admin.get("/refusals")
		today := strings.TrimSpace(p.doc.Find(`[data-testid="refusals-today"]`).Text())
		if today != "2" {
			t.Fatalf("refusals today %q, want 2", today)
		}
		if strings.Contains(p.body, "No refusals yet today.") || !strings.Contains(p.body, "None of today's refusals named a host.") {
			t.Errorf("with %s refusals today, none of them naming a host, the hosts card says %q", today, strings.Join(strings.Fields(p.doc.Find(`section[aria-label="Today"]`).Text()), " "))
		}
	})
}

func TestRefusalCounters(t *testing.T) {
	h := newHarness(t)
	now := time.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var rows []models.Refusal
	var names []string
	add := func(host string, n int, at time.Time) {
		for i := range n {
			rows = append(rows, models.Refusal{Time: at.Add(time.Duration(len(rows)) * time.Second), Host: host, Code: "forbidden"})
			names = append(names, host+strconv.Itoa(i))
		}
	}
	add("old.example", 9, today.AddDate(0, 0, -2)) // busiest, but not today
	add("a.example", 3, today)
	add("b.example", 2, today)
	add("", 4, today) // malformed URLs: counted, but no host to list
	add("c.example", 1, today)
	seedLog(t, h, names, rows)

	p := h.signedIn("sam", models.RoleSupport).get("/refusals")
	if got := p.doc.Find(`[data-testid="refusals-today"]`).Text(); got != "10" {
		t.Errorf("refusals today %q, want 10", got)
	}
	var tops []string
	p.doc.Find(`[data-testid="top-host"]`).Each(func(_ int, s *goquery.Selection) {
		tops = append(tops, strings.Join(strings.Fields(s.Text()), " "))
	})
	if want := []string{"a.example 3", "b.example 2", "c.example 1"}; !slices.Equal(tops, want) {
		t.Errorf("top hosts %q, want %q", tops, want)
	}
	href := p.doc.Find(`[data-testid="top-host"]`).First().AttrOr("href", "")
	u, _ := url.Parse(href)
	if u.Query().Get("host") != `"a.example"` || u.Query().Get("from") != today.Format("2006-01-02T15:04") {
		t.Fatalf("top host links to %q", href)
	}
	if got := len(rowIDs(t, h.signedIn("ann", models.RoleSupport).get(href))); got != 3 {
		t.Errorf("the top host's link shows %d refusals, want 3", got)
	}
}
