package extract

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// chrome is what surrounds a short story on a news site: menus that are not
// in a <nav>, a ticker of links, a sign-in box and a cookie line, together
// many times longer than the story.
var chrome = `<div class="menu">` + strings.Repeat(`<a href="/section">Section name</a> `, 30) + `</div>
<div class="ticker"><ul>` + strings.Repeat(`<li><a href="/markets">DOW 34,120 +0.4%</a></li><li><a href="/markets/n">NASDAQ 14,002 -0.1%</a></li>`, 15) + `</ul></div>
<div class="signin"><div>Sign in</div><div>Email</div><div>Password</div><div>Forgot your password?</div><div>Create an account</div></div>
<div class="more">` + strings.Repeat(`<div><a href="/story/other">Another headline from the same newsroom today</a></div>`, 20) + `</div>`

func TestShortArticlesAreKept(t *testing.T) {
	tests := []struct {
		name, story string
	}{
		{"news brief", `<h1>Harbour bridge reopens after repairs</h1>
<p>The harbour bridge reopened to traffic on Tuesday morning after six weeks of repairs to its deck and railings, the city said.</p>
<p>Buses return to their usual routes from Wednesday. Cyclists keep the temporary lane on the east side until the paint has cured, which should take another week.</p>`},
		{"teaser", `<h2>Inside the new library</h2>
<p>The reading room has three floors of open shelves, a roof garden and a workshop where anyone can borrow tools, print in 3D or repair a bike; it opens to the public next month.</p>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `<html><head><title>Story</title></head><body>` + chrome + `<div class="story">` + tt.story + `</div>` + chrome + `</body></html>`
			page := extractHTMLPage(t, body, "text/html")
			for _, want := range []string{"reopened to traffic", "reading room"} {
				if strings.Contains(tt.story, want) && !strings.Contains(page.Text, want) {
					t.Errorf("Text lacks the story (%q):\n%s", want, page.Text)
				}
			}
			for _, chrome := range []string{"Section name", "DOW 34,120", "Forgot your password", "Another headline"} {
				if strings.Contains(page.Text, chrome) {
					t.Errorf("Text has the page's chrome %q instead of the story alone:\n%s", chrome, page.Text)
				}
			}
		})
	}
}

func TestReleaseNotesReadWhole(t *testing.T) {
	var entries strings.Builder
	for _, v := range []string{"2.4", "2.3", "2.2", "2.1", "2.0"} {
		entries.WriteString(`<div class="release"><h2>Release ` + v + `</h2><p>This release adds webhooks for version ` + v +
			`, retries failed deliveries with backoff and fixes the export of large reports.</p></div>`)
	}
	page := extractHTMLPage(t, `<html><head><title>Changelog</title></head><body><h1>Changelog</h1>`+entries.String()+`</body></html>`, "text/html")
	for _, v := range []string{"Release 2.4", "Release 2.2", "Release 2.0"} {
		if !strings.Contains(page.Text, v) {
			t.Errorf("Text lacks %q:\n%s", v, page.Text)
		}
	}
}

func TestArticleHeadingsKeepTheirLevel(t *testing.T) {
	body := `<html><head><title>Quarterly report for the third quarter | Acme</title></head><body><nav><a href="/">Home</a></nav>
<article><h1>Quarterly report for the third quarter</h1>` + article + `<h2>Outlook</h2>` + article + `</article></body></html>`
	page := extractHTMLPage(t, body, "text/html")
	if !strings.Contains(page.Text, "\n## Outlook\n") {
		t.Errorf("the <h2> is not a level-2 heading:\n%s", page.Text)
	}
	if strings.Contains(page.Text, "## Quarterly report for") {
		t.Errorf("the <h1> came out below level 1:\n%s", page.Text)
	}
	if page.Title != "Quarterly report for the third quarter" {
		t.Errorf("Title = %q, want the site name and separator removed", page.Title)
	}
}

func TestOrderedListNumbers(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"steps keep their numbers", `<ol><li>Open Settings.</li><li>Choose <a href="/tokens">Tokens</a>.</li></ol>`,
			"1. Open Settings.\n2. Choose Tokens [1]."},
		{"a list of links is navigation", `<ol><li><a href="/a">Intro</a></li><li><a href="/b">Setup</a></li></ol>`,
			"- Intro [1]\n- Setup [2]"},
		{"a list that sets its start keeps it", `<ol start="4"><li><a href="/a">Fourth</a></li></ol>`, "4. Fourth [1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extractHTMLPage(t, "<html><body>"+tt.body+"</body></html>", "text/html").Text; got != tt.want {
				t.Errorf("Text = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScriptDrawnPages(t *testing.T) {
	tests := []struct {
		name, body string
		want       bool
	}{
		{"app shell", `<html><head><title>Dashboard</title><script src="/app.js"></script></head><body><div id="root"></div>
<noscript>You need to enable JavaScript to run this app.</noscript></body></html>`, true},
		{"loading placeholder", `<html><body><div id="app">Loading…</div><script>render()</script></body></html>`, true},
		{"short page without scripts", `<html><body><p>OK</p></body></html>`, false},
		{"article with scripts", `<html><head><script src="/analytics.js"></script></head><body>` + article + `</body></html>`, false},
		{"data block is no script", `<html><head><script type="application/ld+json">{"@type":"Thing"}</script></head><body><p>OK</p></body></html>`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extractHTMLPage(t, tt.body, "text/html").ScriptDrawn; got != tt.want {
				t.Errorf("ScriptDrawn = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProseChars(t *testing.T) {
	tests := []struct {
		name, body string
		want       int
	}{
		{"a paragraph of sentences", `<p>One two three four five six seven eight nine ten.</p>`, 40},
		{"links are not prose", `<p><a href="/x">One two three four five six seven eight nine ten.</a></p>`, 0},
		{"scraps are not prose", `<div>Sign in</div><div>Email</div><ul><li>Fix deployed</li></ul>`, 0},
		{"ideographs count as half words", `<p>東京の天気は晴れです。明日も晴れるでしょう。</p>`, 22},
		{"furniture is not prose", `<footer><p>One two three four five six seven eight nine ten.</p></footer>`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := parseHTML(t, "<html><body>"+tt.body+"</body></html>")
			if got := proseChars(doc, false); got != tt.want {
				t.Errorf("proseChars = %d, want %d", got, tt.want)
			}
		})
	}
}

func parseHTML(t *testing.T, s string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
