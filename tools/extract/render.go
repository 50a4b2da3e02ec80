package extract

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// renderer turns a DOM subtree into Markdown-like text: the structure an
// agent needs (headings, lists, links, code, table rows) without the markup
// it does not.
type renderer struct {
	w     *textWriter
	links *linkList
	base  *baseURL
	// inline > 0 inside a table cell rendered on one row: block
	// boundaries there become spaces.
	inline int
	// inArticle is set when rendering Readability's article, which
	// already dropped the page's header: a <header> left inside it holds
	// the article's own headline and byline.
	inArticle bool
	// keepFurniture renders navigation, headers, footers, sidebars and
	// forms too (Render's option).
	keepFurniture bool
}

// render writes n and its subtree.
func (r *renderer) render(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		r.w.text(n.Data)
		return
	case html.DocumentNode:
		r.children(n)
		return
	case html.ElementNode:
	default:
		return
	}
	a := tagOf(n)
	if isNeverText(n) || !r.keepFurniture && isFurniture(n) && !(r.inArticle && a == atom.Header) {
		return
	}
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		r.heading(n)
	case atom.P, atom.Figure, atom.Details, atom.Address, atom.Fieldset, atom.Center:
		r.block(n, 2)
	case atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Footer,
		atom.Figcaption, atom.Summary, atom.Caption, atom.Hgroup, atom.Legend, atom.Dt:
		r.block(n, 1)
	case atom.Ul, atom.Ol, atom.Menu:
		r.list(n)
	case atom.Li:
		r.listItem(n, "- ")
	case atom.Dd:
		r.indented(n, "  ", 1)
	case atom.Dl:
		r.block(n, 2)
	case atom.Blockquote:
		r.indented(n, "> ", 2)
	case atom.Pre:
		r.pre(n)
	case atom.Table:
		r.table(n)
	case atom.Br:
		r.lineBreak(1)
	case atom.Hr:
		if r.inline == 0 {
			r.w.breakLines(2)
			r.w.raw("---")
			r.w.breakLines(2)
		}
	case atom.A:
		r.anchor(n)
	case atom.Code, atom.Kbd, atom.Samp, atom.Tt:
		r.w.openInline("`")
		r.children(n)
		r.w.closeInline("`", "`")
	default:
		r.children(n)
	}
}

func (r *renderer) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.render(c)
	}
}

// lineBreak ends the current line (n=1) or paragraph (n=2); on a table row
// it only separates words.
func (r *renderer) lineBreak(n int) {
	if r.inline > 0 {
		r.w.text(" ")
		return
	}
	r.w.breakLines(n)
}

func (r *renderer) block(n *html.Node, breaks int) {
	r.lineBreak(breaks)
	r.children(n)
	r.lineBreak(breaks)
}

func (r *renderer) heading(n *html.Node) {
	r.lineBreak(2)
	if r.inline > 0 {
		r.children(n)
		return
	}
	// The element's kind, not its name: Readability renames the
	// article's <h1> to <h2>.
	marker := strings.Repeat("#", headingLevel[tagOf(n)]) + " "
	r.w.openInline(marker)
	r.children(n)
	// A heading without text must not leave its "## " behind.
	r.w.closeInline(marker, "")
	r.w.breakLines(2)
}

// indented renders n as a block whose lines start with prefix (a quote's
// "> " or a definition's indentation).
func (r *renderer) indented(n *html.Node, prefix string, breaks int) {
	if r.inline > 0 {
		r.children(n)
		return
	}
	r.w.breakLines(breaks)
	r.w.pushPrefix(prefix, "")
	r.children(n)
	r.w.popPrefix()
	r.w.breakLines(breaks)
}

var headingLevel = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}

func (r *renderer) list(n *html.Node) {
	// A nested list continues its parent item on the next line; a top
	// level list is a paragraph of its own.
	breaks := 2
	if hasAncestor(n, atom.Li) {
		breaks = 1
	}
	r.lineBreak(breaks)
	number := 1
	if start, err := strconv.Atoi(attr(n, "start")); err == nil {
		number = start
	}
	numbered := tagOf(n) == atom.Ol && numbersMatter(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if numbered && c.Type == html.ElementNode && tagOf(c) == atom.Li {
			r.listItem(c, strconv.Itoa(number)+". ")
			number++
			continue
		}
		r.render(c)
	}
	r.lineBreak(breaks)
}

// numbersMatter reports whether an ordered list's numbers carry meaning:
// steps, ranks, clauses. A list of nothing but links (breadcrumbs, a table
// of contents that numbers its own entries, pagination) is navigation, and
// numbers there are noise; a list that sets its own numbering (start,
// reversed, type) always keeps them.
func numbersMatter(ol *html.Node) bool {
	for _, a := range ol.Attr {
		if a.Key == "start" || a.Key == "reversed" || a.Key == "type" {
			return true
		}
	}
	for li := range visibleElements(ol, isElement(atom.Li), notList) {
		if hasTextOutsideLinks(li) {
			return true
		}
	}
	return false
}

func notList(n *html.Node) bool { a := tagOf(n); return a != atom.Ol && a != atom.Ul && a != atom.Li }

// hasTextOutsideLinks reports whether n holds words a reader sees that are
// not part of a link (a nested list's items do not count).
func hasTextOutsideLinks(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			if strings.TrimSpace(c.Data) != "" {
				return true
			}
		case c.Type != html.ElementNode || isNeverText(c):
		case tagOf(c) == atom.A || tagOf(c) == atom.Ol || tagOf(c) == atom.Ul:
		case hasTextOutsideLinks(c):
			return true
		}
	}
	return false
}

func (r *renderer) listItem(n *html.Node, marker string) {
	if isNeverText(n) {
		return
	}
	if r.inline > 0 {
		r.block(n, 1)
		return
	}
	r.w.breakLines(1)
	r.w.pushPrefix(strings.Repeat(" ", len(marker)), marker)
	r.children(n)
	r.w.popPrefix()
	r.w.breakLines(1)
}

// pre keeps preformatted text verbatim inside a fence, because whitespace
// is meaningful in code and ASCII art.
func (r *renderer) pre(n *html.Node) {
	text := strings.Trim(visibleText(n), "\n")
	if r.inline > 0 {
		r.w.text(text)
		return
	}
	if strings.TrimSpace(text) == "" {
		return
	}
	r.w.breakLines(2)
	r.w.raw("```\n" + text + "\n```")
	r.w.breakLines(2)
	r.collectLinks(n)
}

// anchor renders a link as its words followed by its number in the link
// list ("release notes [3]"): the agent can follow any link it reads, and
// the address is written once, in the list, instead of filling the text.
// A link wrapping blocks (a whole card with heading and summary) gets its
// marker after its last word. A link past the list's limit, or one
// without words (an icon), gets no marker.
func (r *renderer) anchor(n *html.Node) {
	target, ok := r.base.resolve(attr(n, "href"))
	if !ok {
		r.children(n)
		return
	}
	number := r.links.add(target, linkText(n, target))
	words := r.w.words
	r.children(n)
	if number > 0 && r.w.words > words {
		r.w.after(" [" + strconv.Itoa(number) + "]")
		r.links.mark(number)
	}
}

// collectLinks records the links inside n that were not rendered as links.
func (r *renderer) collectLinks(n *html.Node) {
	for a := range anchors(n) {
		if target, ok := r.base.resolve(attr(a, "href")); ok {
			r.links.add(target, linkText(a, target))
		}
	}
}

var blockElements = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Ul: true, atom.Ol: true, atom.Li: true, atom.Table: true,
	atom.Pre: true, atom.Blockquote: true, atom.Dl: true, atom.Figure: true,
	atom.Header: true, atom.Footer: true, atom.Main: true, atom.Hr: true,
	atom.Address: true, atom.Details: true,
}

// hasElement reports whether n contains, outside content that is never
// text, an element of one of the given kinds.
func hasElement(n *html.Node, kinds map[atom.Atom]bool) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && !isNeverText(c) && (kinds[c.DataAtom] || hasElement(c, kinds)) {
			return true
		}
	}
	return false
}

func hasAncestor(n *html.Node, a atom.Atom) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.DataAtom == a {
			return true
		}
	}
	return false
}
