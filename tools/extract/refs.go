package extract

import (
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// RenderOptions tune Render.
type RenderOptions struct {
	// Base resolves relative links; nil keeps only absolute ones. A
	// <base href> in the document applies on top of it, as in a browser.
	Base *url.URL
	// KeepFurniture renders navigation, headers, footers, sidebars and
	// forms too. Extract leaves them out as the site's chrome; an agent
	// driving a browser needs them to find its way.
	KeepFurniture bool
}

// Render renders n, a parsed document or any element of one, as the
// Markdown-like text Extract produces: headings with their level, list
// items, tables as rows, and each link's words followed by its number in
// links ("release notes [3]"). links holds up to MaxLinks distinct
// absolute targets in the order the text first shows them; a link past
// that limit keeps its words and gets no marker. LinksSection writes the
// list that goes with the text.
//
// Render first removes, from the whole document n belongs to, every
// element and text a sighted reader could not see (hidden.go): the tree
// is modified. Removing is idempotent, so rendering several elements of
// one document is safe. Scripts, styles and form controls are never
// rendered.
func Render(n *html.Node, opts RenderOptions) (text string, links []Link) {
	root := n
	for root.Parent != nil {
		root = root.Parent
	}
	dropHiddenText(root)
	r := renderer{w: newTextWriter(), links: &linkList{}, base: &baseURL{url: withBaseElement(root, opts.Base)},
		keepFurniture: opts.KeepFurniture}
	r.render(n)
	return r.w.String(), r.links.links
}

// LinksSection is the list that goes with a text carrying link markers:
// "Links:" and one line per link, numbered as the markers are, in the
// form of a Markdown reference definition ("[3]: https://…"). A link whose
// marker is not in the text gets its words as the definition's title
// ("[4]: https://… "Privacy""), since nothing else says what it is. It is
// "" for no links.
func LinksSection(links []Link) string {
	if len(links) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Links:\n")
	for i, l := range links {
		b.WriteString("[" + strconv.Itoa(i+1) + "]: " + l.URL)
		if !l.InText && l.Text != "" && l.Text != l.URL {
			b.WriteString(` "` + strings.ReplaceAll(collapse(l.Text), `"`, "'") + `"`)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
