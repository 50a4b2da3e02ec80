package extract

import (
	"iter"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// table renders a table one row per line, cells joined by " | ", so an
// agent can still read across a row. A cell holding blocks (paragraphs,
// lists, a nested table: a layout table, as on older sites, or an infobox)
// is rendered as blocks instead; squeezing a whole article into one row
// would wreck it.
func (r *renderer) table(n *html.Node) {
	if r.inline > 0 {
		r.children(n)
		return
	}
	r.w.breakLines(2)
	for row := range tableRows(n) {
		r.w.breakLines(1)
		if row.DataAtom == atom.Caption {
			r.inlineCell(row)
		}
		first := true
		for cell := row.FirstChild; cell != nil && row.DataAtom == atom.Tr; cell = cell.NextSibling {
			if cell.Type != html.ElementNode || isNeverText(cell) {
				continue
			}
			if hasElement(cell, blockContent) {
				r.block(cell, 1)
				first = true
				continue
			}
			if !first {
				r.w.separate(" | ")
			}
			first = false
			r.inlineCell(cell)
		}
		r.w.breakLines(1)
	}
	r.w.breakLines(2)
}

// inlineCell renders a cell's content on the current line.
func (r *renderer) inlineCell(cell *html.Node) {
	r.inline++
	r.children(cell)
	r.inline--
}

// tableRows yields the rows of n (in its head, bodies and foot) and its
// caption, which reads as a row of its own; rows of nested tables belong to
// those tables.
func tableRows(n *html.Node) iter.Seq[*html.Node] {
	isRow := func(n *html.Node) bool { return n.DataAtom == atom.Tr || n.DataAtom == atom.Caption }
	isSection := func(n *html.Node) bool {
		return n.DataAtom == atom.Thead || n.DataAtom == atom.Tbody || n.DataAtom == atom.Tfoot
	}
	return visibleElements(n, isRow, isSection)
}

// blockContent are elements that make a table cell a block of its own.
var blockContent = map[atom.Atom]bool{
	atom.Table: true, atom.P: true, atom.Ul: true, atom.Ol: true, atom.Pre: true,
	atom.Blockquote: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Dl: true,
}
