package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// pageTitle is the page's title as Readability cleans it: from the
// article's metadata when the page declares it (JSON-LD, Open Graph),
// else the <title> without the site's name and its separator ("Release
// notes | Acme" reads "Release notes"). The raw title is kept only when
// Readability found none, or when Readability's is the <title> of an SVG
// icon, which it takes for the page's when the page has no title of its
// own.
func pageTitle(doc *html.Node, cleaned string) string {
	cleaned = collapse(cleaned)
	if cleaned == "" {
		return documentTitle(doc)
	}
	if documentTitle(doc) == "" {
		if icon := findElement(doc, atom.Title, func(n *html.Node) bool { return n.Namespace == "svg" }); icon != nil && ownText(icon) == cleaned {
			return ""
		}
	}
	return cleaned
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
