package extract

import (
	"iter"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MaxLinks is the most links a Page lists: enough to navigate a page,
// few enough not to drown the text in an agent's context window.
const MaxLinks = 40

// Link is a hyperlink found on a page. Its number is its place in the
// list, from 1: the text marks a link's words with it ("release notes
// [3]"), so the address is written once, in the list, not in the text.
type Link struct {
	// Text is what the page shows for the link, or the URL when it
	// shows nothing (an icon or an image).
	Text string
	// URL is absolute, with scheme http, https or mailto.
	URL string
	// InText is true when the text carries the link's marker; a link
	// found elsewhere on the page (outside the main text, or inside
	// preformatted text) has none, and its Text says what it is.
	InText bool
}

// baseURL resolves the hrefs of one document.
type baseURL struct {
	// url is the page's URL, adjusted by its <base href>; nil when the
	// caller had no URL, and then only absolute links are kept.
	url *url.URL
}

// resolve returns the absolute form of href, and false for links an agent
// cannot follow: empty, javascript: and other schemes, unparsable, or a
// jump to an anchor within the same page.
func (b *baseURL) resolve(href string) (string, bool) {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return "", false
	}
	u, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	if b.url != nil {
		u = b.url.ResolveReference(u)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
		if b.url != nil && u.Fragment != "" && sameDocument(u, b.url) {
			return "", false
		}
	case "mailto":
		if u.Opaque == "" {
			return "", false
		}
	default:
		return "", false
	}
	return strings.ToValidUTF8(u.String(), "\uFFFD"), true
}

func sameDocument(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && a.Host == b.Host && a.Path == b.Path && a.RawQuery == b.RawQuery
}

// withBaseElement applies the document's <base href>, which browsers use to
// resolve every relative link on the page.
func withBaseElement(doc *html.Node, page *url.URL) *url.URL {
	if page == nil {
		return nil
	}
	base := findElement(doc, atom.Base, func(n *html.Node) bool { return attr(n, "href") != "" })
	if base == nil {
		return page
	}
	u, err := url.Parse(strings.TrimSpace(attr(base, "href")))
	if err != nil {
		return page
	}
	resolved := page.ResolveReference(u)
	if s := strings.ToLower(resolved.Scheme); (s != "http" && s != "https") || resolved.Host == "" {
		return page
	}
	return resolved
}

// linkText is the text a reader sees for a link, falling back to its label
// and then to the URL itself.
func linkText(a *html.Node, target string) string {
	if t := textContent(a); t != "" {
		return t
	}
	for _, key := range []string{"aria-label", "title"} {
		if t := strings.Join(strings.Fields(attr(a, key)), " "); t != "" {
			return t
		}
	}
	return target
}

// linkList keeps the first MaxLinks distinct links in the order added.
type linkList struct {
	links []Link
	// number maps a listed target to its number (its index + 1).
	number map[string]int
}

// add lists target, once, and returns its number; 0 when the list is
// full and target is not on it, and then the text gets no marker.
func (l *linkList) add(target, text string) int {
	if n := l.number[target]; n > 0 {
		return n
	}
	if len(l.links) >= MaxLinks {
		return 0
	}
	if l.number == nil {
		l.number = make(map[string]int)
	}
	l.links = append(l.links, Link{Text: text, URL: target})
	l.number[target] = len(l.links)
	return len(l.links)
}

// mark records that the text carries the marker of link number n.
func (l *linkList) mark(n int) { l.links[n-1].InText = true }

// addPage adds the links of the rest of the page after those of its
// content, leaving out the furniture: a menu, header or footer is the
// site's chrome, not the page's information, and the agent should read
// the page without it, links included.
func (l *linkList) addPage(doc *html.Node, base *baseURL) {
	for a := range visibleElements(doc, isElement(atom.A), notFurniture) {
		if len(l.links) >= MaxLinks {
			return
		}
		if target, ok := base.resolve(attr(a, "href")); ok {
			l.add(target, linkText(a, target))
		}
	}
}

// notFurniture lets a walk descend into everything but the page's chrome.
func notFurniture(n *html.Node) bool { return !isFurniture(n) }

// anchors yields the <a> elements under n a reader could see.
func anchors(n *html.Node) iter.Seq[*html.Node] {
	return visibleElements(n, isElement(atom.A), always)
}

// findElement returns the first element of kind a under n, in document
// order, for which ok returns true.
func findElement(n *html.Node, a atom.Atom, ok func(*html.Node) bool) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.DataAtom == a && ok(c) {
			return c
		}
		if found := findElement(c, a, ok); found != nil {
			return found
		}
	}
	return nil
}
