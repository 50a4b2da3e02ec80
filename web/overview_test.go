package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/outboundhq/outbound/models"
)

// overviewAt is a harness whose clock reads now.
func overviewAt(t *testing.T, now time.Time) *harness {
	t.Helper()
	return newHarnessWith(t, func(d *Deps) { d.Now = func() time.Time { return now } })
}

func TestOverviewCountsMatchTheLogItLinksTo(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Hour).Add(35 * time.Minute)
	h := overviewAt(t, now)
	var rows []models.Refusal
	add := func(n int, at time.Time, r models.Refusal) {
		for i := 0; i < n; i++ {
			r.Time, r.URL = at, "https://"+r.Host+"/"+strconv.Itoa(len(rows))
			rows = append(rows, r)
		}
	}
	// A burst of attack-like refusals two hours ago, a steady trickle of
	// policy refusals, network failures, and older days.
	add(12, now.Add(-2*time.Hour), models.Refusal{Host: "10.0.0.9", Agent: "helpdesk-bot", Tool: "fetch_url", Code: "forbidden", Reason: "internal_address", Kind: "policy"})
	for hr := 0; hr < 24; hr++ {
		add(1, now.Add(-time.Duration(hr)*time.Hour), models.Refusal{Host: "shop.example", Agent: "helpdesk-bot", Tool: "fetch_url", Code: "forbidden", Reason: "not_allowlisted", Kind: "policy"})
	}
	add(3, now.Add(-5*time.Minute), models.Refusal{Host: "gone.example", Agent: "triage", Tool: "take_screenshot", Code: "unreachable", Reason: "dns", Kind: "network"})
	// On the first seconds of an hour: counted in that hour's bar only.
	add(2, now.Truncate(time.Hour).Add(-3*time.Hour+10*time.Second), models.Refusal{Host: "edge.example", Agent: "triage", Tool: "proxy", Code: "forbidden", Reason: "port", Kind: "policy"})
	add(4, now.Add(-3*24*time.Hour), models.Refusal{Host: "old.example", Agent: "triage", Tool: "fetch_url", Code: "forbidden", Reason: "port", Kind: "policy"})
	if err := h.store.InsertRefusals(t.Context(), rows); err != nil {
		t.Fatal(err)
	}
	sam := h.signedIn("sam", models.RoleSupport)
	p := sam.get("/overview")
	if p.status != http.StatusOK {
		t.Fatalf("overview: %d", p.status)
	}
	for id, want := range map[string]string{"total-attack": "12", "total-policy": "26", "total-network": "3"} {
		if got := strings.Fields(p.doc.Find(`[data-testid="` + id + `"]`).Text())[0]; got != want {
			t.Errorf("%s = %s, want %s", id, got, want)
		}
	}
	bars := p.doc.Find(`[data-testid="bar-hours"]`)
	if bars.Length() != 24 || p.doc.Find(`[data-testid="bar-days"]`).Length() != 30 {
		t.Fatalf("%d hour bars, %d day bars", bars.Length(), p.doc.Find(`[data-testid="bar-days"]`).Length())
	}
	// Every link carries no empty parameter, and every hour's count is
	// what its link's log shows.
	p.doc.Find("main a[href]").Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		u, _ := url.Parse(href)
		for k, vs := range u.Query() {
			if len(vs) != 1 || vs[0] == "" {
				t.Errorf("link %s has an empty %s", href, k)
			}
		}
	})
	p.doc.Find(`[data-testid="table-hours"] tbody tr`).Each(func(_ int, tr *goquery.Selection) {
		href, _ := tr.Find("th a").Attr("href")
		want, _ := strconv.Atoi(tr.Find(`[data-testid="row-total"]`).Text())
		if got := logRows(t, sam, href); got != want {
			t.Errorf("%s: the table says %d, the log shows %d", href, want, got)
		}
	})
	if n := p.doc.Find(`[data-testid="spike-marker"]`).Length(); n != 1 {
		t.Errorf("%d spike markers, want 1 (the burst two hours ago)", n)
	}
	if !strings.Contains(p.doc.Find(`[data-testid="spikes"]`).Text(), now.Add(-2*time.Hour).Truncate(time.Hour).Format("15:04")) {
		t.Errorf("the spike note does not name the hour: %q", p.doc.Find(`[data-testid="spikes"]`).Text())
	}
	for _, list := range []string{"top-hosts", "top-agents", "top-tools", "attack-reasons"} {
		p.doc.Find(`[data-testid="` + list + `"] tr`).Each(func(_ int, tr *goquery.Selection) {
			href, _ := tr.Find("a").Attr("href")
			want, _ := strconv.Atoi(tr.Find(`[data-testid="top-count"]`).Text())
			if got := logRows(t, sam, href); got != want {
				t.Errorf("%s %s: the list says %d, the log shows %d", list, href, want, got)
			}
		})
	}
	if got := p.doc.Find(`[data-testid="top-hosts"] tr`).First().Find("a").Text(); got != "shop.example" {
		t.Errorf("most refused host = %q", got)
	}
	// The SVG has its text alternative.
	if p.doc.Find(`svg title#hours-svg-title`).Length() != 1 || p.doc.Find(`svg desc#hours-svg-desc`).Length() != 1 {
		t.Error("the hours chart has no title and description")
	}
}

// logRows counts the rows of the refusal log at href (one page).
func logRows(t *testing.T, b *browser, href string) int {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil || u.Path != "/refusals" {
		t.Fatalf("link %q is not to the refusal log", href)
	}
	p := b.get(href)
	if p.status != http.StatusOK {
		t.Fatalf("%s: %d", href, p.status)
	}
	n := p.doc.Find(`[data-testid="refusal-row"]`).Length()
	if p.doc.Find(`[data-testid="page-older"]`).Length() > 0 {
		t.Fatalf("%s: more than one page", href)
	}
	return n
}

func TestSpikes(t *testing.T) {
	b := func(attack ...int64) []models.OverviewBucket {
		out := make([]models.OverviewBucket, len(attack))
		for i, a := range attack {
			out[i].Attack = a
		}
		return out
	}
	for _, c := range []struct {
		in   []models.OverviewBucket
		want []bool
	}{
		{b(0, 0, 4), []bool{false, false, false}},               // under the floor
		{b(0, 0, 5), []bool{false, false, true}},                // the floor, over 3 × 0
		{b(10, 10, 30, 10), []bool{false, false, false, false}}, // exactly 3 × the median is no spike
		{b(10, 10, 31, 10), []bool{false, false, true, false}},  // over it is
		{b(40, 40, 40, 40), []bool{false, false, false, false}}, // a steady high level is no spike
		{b(0, 2, 20, 3), []bool{false, false, true, false}},     // median 2.5: 20 > 7.5
		{b(2, 3), []bool{false, false}},                         // even count, under the floor
	} {
		got := spikes(c.in, 5)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("spikes(%v) = %v, want %v", c.in, got, c.want)
				break
			}
		}
	}
}

func TestLandingPageByRole(t *testing.T) {
	h := newHarness(t)
	sam := h.signedIn("sam", models.RoleSupport)
	ada := h.signedIn("ada", models.RoleAdmin)
	for _, c := range []struct {
		b    *browser
		want string
	}{{sam, "/overview"}, {ada, "/integrations"}, {h.browser(), "/login"}} {
		resp, err := c.b.client.Get(h.srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || got != c.want {
			t.Errorf("/: %d %s, want %s", resp.StatusCode, got, c.want)
		}
	}
	h.addUser("sue", models.RoleSupport)
	resp := h.browser().postForm("/login", url.Values{"name": {"sue"}, "password": {testPassword}})
	resp.Body.Close()
	if got := resp.Header.Get("Location"); got != "/overview" {
		t.Errorf("support signs in to %q, want /overview", got)
	}
}

// The top lists cover yesterday and today (UTC), from yesterday's
// midnight: whole days, which the store's counters answer. A refusal on
// yesterday's first minute is listed, one a minute before it is not, and
// the list says where it starts; its link's log counts the same.
func TestOverviewTopListsCoverYesterdayAndToday(t *testing.T) {
	now := time.Now().UTC().Truncate(24 * time.Hour).Add(9*time.Hour + 10*time.Minute)
	h := overviewAt(t, now)
	yesterday := now.Truncate(24 * time.Hour).Add(-24 * time.Hour)
	rows := []models.Refusal{
		{Time: yesterday.Add(30 * time.Second), Host: "early.example", URL: "https://early.example/", Agent: "bot", Tool: "fetch_url", Reason: "not_allowlisted", Kind: "policy"},
		{Time: yesterday.Add(-time.Minute), Host: "before.example", URL: "https://before.example/", Agent: "bot", Tool: "fetch_url", Reason: "not_allowlisted", Kind: "policy"},
	}
	if err := h.store.InsertRefusals(t.Context(), rows); err != nil {
		t.Fatal(err)
	}
	sam := h.signedIn("sam", models.RoleSupport)
	p := sam.get("/overview")
	list := p.doc.Find(`[data-testid="top-hosts"]`)
	if got := list.Find("tr a").Text(); got != "early.example" {
		t.Errorf("top hosts = %q, want early.example alone (before.example is from the day before yesterday)", got)
	}
	if want := "since " + yesterday.Format("Mon 2006-01-02") + " 00:00 UTC"; !strings.Contains(list.Text(), want) {
		t.Errorf("the top list does not say %q: %q", want, list.Text())
	}
	href, _ := list.Find("tr a").Attr("href")
	if got := logRows(t, sam, href); got != 1 {
		t.Errorf("%s shows %d refusals, want the 1 the list counts", href, got)
	}
}
