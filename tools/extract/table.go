package extract

import (
	"iter"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// table renders a data table one row per line, cells joined by " | ", so
// an agent can still read across a row. Layout tables (cells holding
// paragraphs, lists or other tables, as on older sites) are rendered cell
// by cell as ordinary blocks: squeezing a whole article into one "row"
// would wreck it.
func (r *renderer) table(n *html.Node) {
	if r.inline > 0 || isLayoutTable(n) {
		r.block(n, 1)
		return
	}
	r.w.breakLines(2)
	for row := range tableRows(n) {
		r.w.breakLines(1)
		r.inline++
		if row.DataAtom == atom.Caption {
			r.children(row)
		}
		first := true
		for cell := row.FirstChild; cell != nil; cell = cell.NextSibling {
			if cell.Type != html.ElementNode || isNeverText(cell) || row.DataAtom == atom.Caption {
				continue
			}
			if !first {
				r.w.separate(" | ")
			}
			first = false
			r.children(cell)
		}
		r.inline--
		r.w.breakLines(1)
	}
	r.w.breakLines(2)
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

// layoutCellContent are elements that make a table a layout table when a
// cell contains them.
var layoutCellContent = map[atom.Atom]bool{
	atom.Table: true, atom.P: true, atom.Ul: true, atom.Ol: true, atom.Pre: true,
	atom.Blockquote: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Dl: true, atom.Form: true,
}

func isLayoutTable(table *html.Node) bool {
	if attr(table, "role") == "presentation" {
		return true
	}
	var found bool
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && !found; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if layoutCellContent[c.DataAtom] {
				found = true
				return
			}
			walk(c)
		}
	}
	walk(table)
	return found
}
