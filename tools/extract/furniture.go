package extract

import (
	"iter"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// neverText are elements whose content a reader never sees as text: code,
// styling, embedded documents, images and form controls.
var neverText = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Iframe: true,
	atom.Noscript: true, atom.Template: true, atom.Svg: true, atom.Canvas: true,
	atom.Object: true, atom.Embed: true, atom.Audio: true, atom.Video: true,
	atom.Img: true, atom.Picture: true, atom.Source: true, atom.Track: true,
	atom.Map: true, atom.Button: true, atom.Input: true, atom.Select: true,
	atom.Textarea: true, atom.Option: true, atom.Datalist: true, atom.Dialog: true,
	atom.Title: true, atom.Meta: true, atom.Link: true, atom.Base: true,
}

// furniture are the parts of a page around its content: menus, banners,
// sidebars and forms. They are dropped from the text and from the link
// list.
var furniture = map[atom.Atom]bool{
	atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true,
	atom.Form: true,
}

// isFurniture reports whether n is part of the page's chrome. A form is,
// unless it holds the page's content: some sites (ASP.NET WebForms) wrap
// the whole body in one.
func isFurniture(n *html.Node) bool {
	a := tagOf(n)
	if !furniture[a] {
		return false
	}
	if a != atom.Form {
		return true
	}
	holdsContent := func(n *html.Node) bool { return true }
	return findElement(n, atom.Main, holdsContent) == nil && findElement(n, atom.Article, holdsContent) == nil &&
		findElement(n, atom.H1, holdsContent) == nil
}

// tagOf is n's element kind. Readability creates elements without one
// (the paragraphs it makes of runs of <br>), so their name decides; an
// element it renamed ("h1" to "h2", "div" to "p") keeps its original
// kind, which is what the page meant.
func tagOf(n *html.Node) atom.Atom {
	if n.DataAtom != 0 || n.Type != html.ElementNode {
		return n.DataAtom
	}
	return atom.Lookup([]byte(n.Data))
}

// isNeverText reports whether n and its subtree never contribute text or
// links: an element of a neverText kind. Elements hidden from readers are
// already gone (dropHiddenText).
func isNeverText(n *html.Node) bool {
	return n.Type == html.ElementNode && neverText[tagOf(n)]
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// textContent returns the whitespace-collapsed text a reader sees in n.
func textContent(n *html.Node) string { return collapse(visibleText(n)) }

// visibleText returns the text a reader sees in n, whitespace untouched
// except that line breaks and block elements start new lines.
func visibleText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
		case isNeverText(n):
		case n.Type == html.ElementNode && n.DataAtom == atom.Br:
			b.WriteByte('\n')
		default:
			block := n.Type == html.ElementNode && (blockElements[n.DataAtom] || cellElements[n.DataAtom])
			if block {
				b.WriteByte('\n')
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
			if block {
				b.WriteByte('\n')
			}
		}
	}
	walk(n)
	return b.String()
}

// cellElements separate words like blocks do, though they are parts of
// tables, definition lists and figures rather than blocks of their own.
var cellElements = map[atom.Atom]bool{
	atom.Td: true, atom.Th: true, atom.Tr: true, atom.Caption: true,
	atom.Dt: true, atom.Dd: true, atom.Figcaption: true,
}

// visibleElements yields, in document order, the elements under n a reader
// could see for which match returns true. It looks inside an element only
// when descend returns true for it.
func visibleElements(n *html.Node, match, descend func(*html.Node) bool) iter.Seq[*html.Node] {
	return func(yield func(*html.Node) bool) {
		var walk func(*html.Node) bool
		walk = func(n *html.Node) bool {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type != html.ElementNode || isNeverText(c) {
					continue
				}
				if match(c) && !yield(c) {
					return false
				}
				if descend(c) && !walk(c) {
					return false
				}
			}
			return true
		}
		walk(n)
	}
}

func isElement(a atom.Atom) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.DataAtom == a }
}

func always(*html.Node) bool { return true }

// dropChrome removes, before Readability looks at the page, what no
// rendering of it ever shows and Readability would otherwise copy and
// score on every pass: navigation outside the page's <main> or <article>,
// SVG drawings, templates, comments and the whitespace between blocks. Less tree makes Readability
// faster, and a menu it never sees is one it cannot mistake for content.
// Other furniture stays: Readability weighs a sidebar or a footer when it
// decides where the article ends.
func dropChrome(n *html.Node, inContent bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch c.Type {
		case html.CommentNode:
			n.RemoveChild(c)
		case html.TextNode:
			// The indentation between two blocks is no text: it only
			// makes the tree Readability copies larger.
			if isLayoutWhitespace(c) {
				n.RemoveChild(c)
			}
		case html.ElementNode:
			a := c.DataAtom
			switch {
			case a == atom.Svg || a == atom.Template:
				n.RemoveChild(c)
			case !inContent && a == atom.Nav:
				n.RemoveChild(c)
			case !neverText[a] || a == atom.Head:
				dropChrome(c, inContent || a == atom.Main || a == atom.Article)
			}
		}
		c = next
	}
}

// isLayoutWhitespace reports whether a text node is only whitespace
// between two blocks (or a block and the edge of its parent), where no
// reader sees it: "<div>\n  <p>…</p>\n  <p>…</p>\n</div>". Between
// inline elements ("<b>a</b> <i>b</i>") a space separates words, and it
// stays; so does everything in <pre>, which dropChrome never reaches with
// this (a <pre> holds no blocks).
func isLayoutWhitespace(t *html.Node) bool {
	if strings.TrimLeft(t.Data, " \t\n\r\f") != "" {
		return false
	}
	return isLayoutBlock(t.PrevSibling) && isLayoutBlock(t.NextSibling) && tagOf(t.Parent) != atom.Pre
}

// isLayoutBlock reports whether n is nothing (the edge of its parent) or
// an element that starts a block of its own.
func isLayoutBlock(n *html.Node) bool {
	if n == nil {
		return true
	}
	if n.Type != html.ElementNode {
		return false
	}
	a := tagOf(n)
	return blockElements[a] || cellElements[a] || layoutElements[a]
}

// layoutElements are blocks that blockElements leaves out because the
// renderer handles them on their own.
var layoutElements = map[atom.Atom]bool{
	atom.Html: true, atom.Head: true, atom.Body: true, atom.Table: true, atom.Thead: true,
	atom.Tbody: true, atom.Tfoot: true, atom.Tr: true, atom.Nav: true, atom.Aside: true,
	atom.Form: true, atom.Title: true, atom.Meta: true, atom.Link: true,
}
