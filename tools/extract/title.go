package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// pageTitle is the page's title as Readability cleans it: the <title>
// without the site's name and its separator ("Release notes | Acme" reads
// "Release notes"), or the title the article's metadata declares (JSON-LD,
// Open Graph). A title is taken only where people see it: in the <title>
// (a browser's tab), a <meta> title (a link's preview in a chat or a
// search result), or a visible heading. A title only JSON-LD declares sits
// in a <script>, which no reader sees: taking it would be a way round the
// rule that hidden text never reaches the agent. The raw title stands in when Readability's
// is not taken, and when Readability's is the <title> of an SVG icon,
// which it takes for the page's when the page has no title of its own.
func pageTitle(doc *html.Node, cleaned string) string {
	cleaned = collapse(cleaned)
	raw := documentTitle(doc)
	if cleaned == "" || !shownTitle(doc, raw, cleaned) {
		return raw
	}
	if raw == "" {
		if icon := findElement(doc, atom.Title, func(n *html.Node) bool { return n.Namespace == "svg" }); icon != nil && ownText(icon) == cleaned {
			return ""
		}
	}
	return cleaned
}

// shownTitle reports whether people see title: in the <title> (raw), a
// <meta> that titles the page's previews, or a heading that survived the
// removal of hidden text.
func shownTitle(doc *html.Node, raw, title string) bool {
	if strings.Contains(raw, title) {
		return true
	}
	titles := func(m *html.Node) bool {
		name := strings.ToLower(attr(m, "property") + " " + attr(m, "name"))
		return strings.Contains(name, "title") && strings.Contains(collapse(attr(m, "content")), title)
	}
	if findElement(doc, atom.Meta, titles) != nil {
		return true
	}
	isHeading := func(n *html.Node) bool { return headingLevel[n.DataAtom] > 0 }
	for h := range visibleElements(doc, isHeading, always) {
		if strings.Contains(textContent(h), title) {
			return true
		}
	}
	return false
}

// documentTitle is the text of the page's <title> or, for pages without
// one, of the title it declares for link previews (og:title, twitter:title).
func documentTitle(doc *html.Node) string {
	t := findElement(doc, atom.Title, func(n *html.Node) bool {
		return n.Namespace == "" && ownText(n) != ""
	})
	if t != nil {
		return ownText(t)
	}
	for _, name := range []string{"og:title", "twitter:title"} {
		meta := findElement(doc, atom.Meta, func(n *html.Node) bool {
			return (attr(n, "property") == name || attr(n, "name") == name) && collapse(attr(n, "content")) != ""
		})
		if meta != nil {
			return collapse(attr(meta, "content"))
		}
	}
	return ""
}

// ownText is the collapsed text of n's own text children: all a <title>
// holds, since its content is never parsed as markup.
func ownText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return collapse(b.String())
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
