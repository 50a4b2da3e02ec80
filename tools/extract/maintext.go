package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Whether a candidate (Readability's article, the page's <main>) stands
// for the page is judged by its running text, not by its length alone. A
// news brief of three sentences is the whole point of its page even when
// menus, tickers and sign-in boxes make the page ten times longer; the
// latest entry of a changelog is not, when the entries below it are as
// much prose as it is; and a status page's "Fix deployed" bullet is no
// article at all. Menus and tickers are links or scraps of a few words,
// so they do not count as running text; paragraphs of sentences do.

// fullArticleChars is enough text to be an article whatever surrounds it.
const fullArticleChars = 500

// minShareChars and maxShrink keep a short candidate that is a fair share
// of a short page (at least minShareChars, and no more than maxShrink
// times shorter than the whole page), prose or not: a status page's <main>
// with its heading and bullets.
const (
	minShareChars = 200
	maxShrink     = 5
)

// proseShare is how much of the page's running text a short candidate
// must hold: a third leaves room for a teaser or a comment beside a brief,
// but not for the other entries of a list of equals.
const proseShare = 3

// proseBlockWords is the least number of words (outside links) that makes
// a block running text rather than a label, a menu entry or a scrap.
const proseBlockWords = 10

// pageMeasure measures the whole page once, lazily: most articles are
// long enough on their own and never need it.
type pageMeasure struct {
	doc   *html.Node
	base  *baseURL
	whole *rendering
	prose int
	done  bool // prose is measured
}

func (m *pageMeasure) wholePage() rendering {
	if m.whole == nil {
		r := render(m.doc, m.base, false)
		m.whole = &r
	}
	return *m.whole
}

func (m *pageMeasure) pageProse() int {
	if !m.done {
		m.prose = proseChars(m.doc, false)
		m.done = true
	}
	return m.prose
}

// isMainText reports whether r, the rendering of candidate, stands for the
// page: it is long enough to be an article whatever surrounds it; or it is
// running text holding a fair share of the page's running text; or it is a
// fair share of a short page.
func (m *pageMeasure) isMainText(r rendering, candidate *html.Node) bool {
	switch {
	case r.chars >= fullArticleChars:
		return true
	case r.chars == 0:
		return false
	}
	if prose := proseChars(candidate, true); prose > 0 && prose*proseShare >= m.pageProse() {
		return true
	}
	return r.chars >= minShareChars && r.chars*maxShrink >= m.wholePage().chars
}

// proseChars counts the characters (spaces aside) of running text under
// n: the text,
// outside links, of the blocks that hold at least proseBlockWords words of
// it. Furniture does not count, except a <header> inside Readability's
// article (inArticle), which holds its headline.
func proseChars(n *html.Node, inArticle bool) int {
	total := 0
	var walk func(n *html.Node, block *proseBlock, inLink bool)
	walk = func(n *html.Node, block *proseBlock, inLink bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				if !inLink {
					block.add(c.Data)
				}
				continue
			case html.ElementNode:
			default:
				continue
			}
			a := tagOf(c)
			if isNeverText(c) || isFurniture(c) && !(inArticle && a == atom.Header) {
				continue
			}
			if !blockElements[a] && !cellElements[a] && a != atom.Br {
				walk(c, block, inLink || a == atom.A)
				continue
			}
			inner := &proseBlock{}
			walk(c, inner, inLink || a == atom.A)
			total += inner.prose()
		}
	}
	outer := &proseBlock{}
	walk(n, outer, false)
	return total + outer.prose()
}

// proseBlock gathers the text of one block outside links.
type proseBlock struct {
	chars int
	// halfWords counts words twice over, so that a character of a
	// script written without spaces can count as half a word.
	halfWords int
	inWord    bool
}

func (b *proseBlock) add(s string) {
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			b.inWord = false
			continue
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			// Scripts without spaces: two characters make about a word.
			b.halfWords++
			b.inWord = false
		case !b.inWord:
			b.halfWords += 2
			b.inWord = true
		}
		b.chars++
	}
}

func (b *proseBlock) prose() int {
	if b.halfWords/2 >= proseBlockWords {
		return b.chars
	}
	return 0
}

// isScriptShell reports whether a page's text is too thin to be what a
// reader sees: a page that runs scripts and shows next to nothing without
// them is drawn by those scripts.
func isScriptShell(text string) bool {
	const thinWords, thinChars = 20, 200
	return len(text) < 4*thinChars && utf8.RuneCountInString(text) < thinChars && len(strings.Fields(text)) < thinWords
}

// runsScripts reports whether the page has scripts that could draw it:
// any <script> but the data blocks (JSON-LD and the like) that describe it.
func runsScripts(doc *html.Node) bool {
	return findElement(doc, atom.Script, func(n *html.Node) bool {
		t := strings.ToLower(strings.TrimSpace(attr(n, "type")))
		return t == "" || t == "module" || strings.Contains(t, "javascript") || strings.Contains(t, "ecmascript")
	}) != nil
}
