package extract

import (
	"fmt"
	"net/url"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// extractHTML reads a web page: its title, its main text and its links.
//
// The page is parsed once and the tree is not copied: hidden text is
// removed in place, and Readability works on the same tree
// (ParseAndMutate). Readability builds its article from a copy it makes
// itself, and changes the tree it is given only in ways the whole-page
// rendering can live with (scripts, comments and styles go, which the
// renderer never shows; runs of <br> become paragraphs), so the tree still
// serves as the fallback rendering and as the source of the page's links
// and title.
func extractHTML(body []byte, contentType string, page *url.URL) (Page, error) {
	doc, err := html.Parse(decodeHTML(body, contentType))
	if err != nil {
		return Page{}, fmt.Errorf("extract: parsing HTML: %w", err)
	}
	base := &baseURL{url: withBaseElement(doc, page)}
	scripted := runsScripts(doc)
	dropHiddenText(doc)
	dropChrome(doc, false)
	parser := readability.NewParser()
	article, err := parser.ParseAndMutate(doc, readabilityURL(base.url))
	if err != nil {
		// Readability only refuses documents over its element limit
		// (none is set); the whole-page rendering still reads them.
		article = readability.Article{}
	}

	links := &linkList{}
	text := chooseText(doc, article.Node, base, links)
	links.addPage(doc, base)

	return Page{
		Title:       pageTitle(doc, article.Title()),
		Text:        text,
		Links:       links.links,
		ScriptDrawn: scripted && isScriptShell(text),
	}, nil
}

// readabilityURL gives Readability a URL to resolve links against; it
// needs one even when the caller has none.
func readabilityURL(u *url.URL) *url.URL {
	if u == nil {
		return &url.URL{}
	}
	return u
}

// chooseText renders the page's main text (pickRendering) and lists the
// links of that rendering first, keeping the numbers its markers use.
func chooseText(doc, article *html.Node, base *baseURL, links *linkList) string {
	best := pickRendering(doc, article, base)
	for _, l := range best.links.links {
		links.add(l.URL, l.Text)
		if l.InText {
			links.mark(links.number[l.URL])
		}
	}
	return best.text
}

// pickRendering chooses the text that stands for the page: Readability's
// article when it is a coherent article (isMainText), else the page's
// <main> or lone <article> when that is, else the whole body minus its
// furniture: the common case of status pages and release notes, where
// there is no single article to find.
func pickRendering(doc, article *html.Node, base *baseURL) rendering {
	judge := &pageMeasure{doc: doc, base: base}
	if article != nil {
		if r := render(article, base, true); judge.isMainText(r, article) {
			return r
		}
	}
	if landmark := mainLandmark(doc); landmark != nil {
		if r := render(landmark, base, false); judge.isMainText(r, landmark) {
			return r
		}
	}
	return judge.wholePage()
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
