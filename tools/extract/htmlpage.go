package extract

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// minArticleChars is the least text Readability's article must have to be
// trusted. Below it, Readability has usually latched onto a fragment of a
// short page (a status page, a release note) and the whole page reads
// better.
const minArticleChars = 200

// fullArticleChars is enough text to be an article whatever surrounds it.
const fullArticleChars = 500

// maxShrink bounds how much shorter than the next, wider candidate (the
// <main>, then the whole body) a chosen text may be. A text many times
// shorter has missed most of the page.
const maxShrink = 5

// extractHTML reads a web page: its title, its main text and its links.
func extractHTML(body []byte, contentType string, page *url.URL) (Page, error) {
	doc, err := html.Parse(strings.NewReader(decodeHTML(body, contentType)))
	if err != nil {
		return Page{}, fmt.Errorf("extract: parsing HTML: %w", err)
	}
	base := &baseURL{url: withBaseElement(doc, page)}
	dropHiddenText(doc)
	article, err := readability.FromDocument(doc, readabilityURL(base.url))
	if err != nil {
		// Readability only refuses documents over its element limit
		// (none is set); the whole-page rendering still reads them.
		article = readability.Article{}
	}

	links := &linkList{}
	text := chooseText(doc, article.Node, base, links)
	links.addPage(doc, base)

	return Page{Title: documentTitle(doc), Text: text, Links: links.links}, nil
}

// readabilityURL gives Readability a URL to resolve links against; it
// needs one even when the caller has none.
func readabilityURL(u *url.URL) *url.URL {
	if u == nil {
		return &url.URL{}
	}
	return u
}

// chooseText renders the page's main text. Readability's article wins when
// it is substantial and not many times shorter than the page; otherwise the
// page's <main> or lone <article> when it has real text, and failing that
// the whole body minus furniture. The links of the chosen rendering are
// added to links.
func chooseText(doc, article *html.Node, base *baseURL, links *linkList) string {
	best := pickRendering(doc, article, base)
	for _, l := range best.links.links {
		links.add(l.URL, l.Text)
	}
	return best.text
}

func pickRendering(doc, article *html.Node, base *baseURL) rendering {
	// The whole page is rendered only when a shorter candidate needs
	// comparing with it: most articles are long enough on their own.
	var whole *rendering
	wholePage := func() rendering {
		if whole == nil {
			r := render(doc, base, false)
			whole = &r
		}
		return *whole
	}
	if article != nil {
		if r := render(article, base, true); isSubstantial(r, wholePage) {
			return r
		}
	}
	if landmark := mainLandmark(doc); landmark != nil {
		if r := render(landmark, base, false); isSubstantial(r, wholePage) {
			return r
		}
	}
	return wholePage()
}

// isSubstantial reports whether part has enough text to stand for the page:
// a few paragraphs, or at least a fair share of a short page. Long pages
// are routinely ten times the length of their article (comments, related
// stories), so the share only matters for short parts.
func isSubstantial(part rendering, whole func() rendering) bool {
	if part.chars >= fullArticleChars {
		return true
	}
	return part.chars >= minArticleChars && part.chars*maxShrink >= whole().chars
}

// rendering is one candidate text of a page.
type rendering struct {
	text  string
	chars int
	links *linkList
}

func render(n *html.Node, base *baseURL, isArticle bool) rendering {
	r := renderer{w: newTextWriter(), links: &linkList{}, base: base, inArticle: isArticle}
	r.render(n)
	text := r.w.String()
	return rendering{text: text, chars: utf8.RuneCountInString(text), links: r.links}
}

// mainLandmark returns the page's <main>, or its <article> when it has
// exactly one (several articles make a listing, not an article).
func mainLandmark(doc *html.Node) *html.Node {
	visible := func(n *html.Node) bool { return !isNeverText(n) }
	if m := findElement(doc, atom.Main, visible); m != nil {
		return m
	}
	var found *html.Node
	count := 0
	findElement(doc, atom.Article, func(n *html.Node) bool {
		if visible(n) && !hasAncestor(n, atom.Article) {
			found = n
			count++
		}
		return false
	})
	if count == 1 {
		return found
	}
	return nil
}

// documentTitle is the text of the page's <title> or, for pages without
// one, of the title it declares for link previews (og:title, twitter:title).
// Readability's own title is not used: it takes the first <title> even when
// that names an SVG icon.
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
