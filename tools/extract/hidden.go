package extract

import (
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Hidden text is the classic carrier of orders meant for an agent and not
// for the page's human readers ("ignore previous instructions…"), so text a
// sighted reader cannot see is removed from the document before Readability
// or the renderer look at it. Readability strips style and class attributes
// from its article, so the decision cannot be made later.
//
// An element goes with its whole subtree when it is hidden in a way its
// children cannot undo (display:none, the hidden attribute, aria-hidden,
// screen-reader-only classes, zero opacity, off-screen positioning,
// clipping, a collapsed box). Text goes on its own when it is hidden by an
// inherited property a child may reset: a zero font size, visibility:hidden,
// or a colour that matches the background it sits on.

// visuallyHiddenClasses are the class names frameworks and CMSs use to
// hide text from sighted readers (screen-reader-only text) or from
// everyone. Their styles usually come from an external stylesheet this
// package never sees, so the names themselves count.
var visuallyHiddenClasses = map[string]bool{
	"sr-only": true, "sr-only-focusable": true, "visually-hidden": true, "visuallyhidden": true,
	"visually-hidden-focusable": true, "screen-reader-text": true, "screen-reader-only": true,
	"screenreader-only": true, "element-invisible": true, "hidden-visually": true,
	"u-hidden-visually": true, "u-visually-hidden": true, "a11y-hidden": true,
	"is-visually-hidden": true, "cdk-visually-hidden": true, "assistive-text": true,
	"d-none": true, "hidden": true, "is-hidden": true, "invisible": true,
}

var rxScaleZero = regexp.MustCompile(`\bscale(?:x|y|3d)?\(\s*0+(?:\.0+)?\s*[,)]`)

// textStyle is what an element hands down to its children that decides
// whether their text can be seen.
type textStyle struct {
	tinyFont, invisible bool
	color, backdrop     rgba
	hasColor            bool
	hasBackdrop         bool
}

// hides reports whether text in this style cannot be seen.
func (s textStyle) hides() bool {
	if s.tinyFont || s.invisible {
		return true
	}
	if !s.hasColor {
		return false
	}
	if s.color.a <= 0.05 {
		return true
	}
	if !s.hasBackdrop {
		return false
	}
	fg := s.color
	if fg.a < 1 {
		blend := func(f, b float64) float64 { return f*fg.a + b*(1-fg.a) }
		fg = rgba{blend(fg.r, s.backdrop.r), blend(fg.g, s.backdrop.g), blend(fg.b, s.backdrop.b), 1}
	}
	return indistinguishable(fg, s.backdrop)
}

// dropHiddenText removes from doc every element and text node a sighted
// reader of the page could not see.
func dropHiddenText(doc *html.Node) {
	dropHiddenChildren(doc, pageStyleSheet(doc), textStyle{})
}

func dropHiddenChildren(n *html.Node, sheet *styleSheet, inherited textStyle) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch c.Type {
		case html.TextNode:
			if inherited.hides() && strings.TrimSpace(c.Data) != "" {
				n.RemoveChild(c)
			}
		case html.ElementNode:
			if neverText[c.DataAtom] {
				break
			}
			style := computeStyle(c, sheet)
			if c.DataAtom == atom.Html || c.DataAtom == atom.Body {
				// Pages hide their body until scripts have run
				// (body{visibility:hidden}, opacity:0): only the
				// colours they set count.
				style = style.coloursOnly()
			} else if hiddenElement(c, style) {
				n.RemoveChild(c)
				break
			}
			if v := style["visibility"]; v == "hidden" || v == "collapse" {
				// Its own text is dropped below; Readability would drop
				// the children that make themselves visible again too.
				removeAttr(c, "style")
			}
			dropHiddenChildren(c, sheet, inherited.with(style))
		default:
			dropHiddenChildren(c, sheet, inherited)
		}
		c = next
	}
}

// coloursOnly keeps the colour properties of a style.
func (s computedStyle) coloursOnly() computedStyle {
	out := computedStyle{}
	for _, p := range []string{"color", "background", "background-color"} {
		if v, ok := s[p]; ok {
			out[p] = v
		}
	}
	return out
}

// hiddenElement reports whether n and everything in it is out of sight.
func hiddenElement(n *html.Node, style computedStyle) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "class":
			for c := range strings.FieldsSeq(a.Val) {
				if visuallyHiddenClasses[strings.ToLower(c)] {
					return true
				}
			}
		}
	}
	if n.Data == "mjx-assistive-mml" && n.Parent != nil && n.Parent.Data == "mjx-container" {
		// MathJax draws a formula with glyphs that hold no text and
		// clips this copy of it away for screen readers: it is the only
		// text of what the reader sees.
		return style["display"] == "none"
	}
	return style != nil && style.hidesBox()
}

// hidesBox reports whether the style hides the element's box in a way no
// descendant can undo.
func (s computedStyle) hidesBox() bool {
	if s["display"] == "none" || s["content-visibility"] == "hidden" {
		return true
	}
	if o, ok := parseLength(s["opacity"]); ok && (o.unit == "" && o.value <= 0.01 || o.unit == "%" && o.value <= 1) {
		return true
	}
	if rxScaleZero.MatchString(s["transform"]) {
		return true
	}
	if farOffScreen(s["text-indent"]) || farOffScreen(s["margin-left"]) {
		return true
	}
	if pos := s["position"]; pos == "absolute" || pos == "fixed" {
		if farOffScreen(s["left"]) || farOffScreen(s["top"]) || farOffScreen(s["right"]) {
			return true
		}
	}
	if clipsAll(s["clip"], s["clip-path"]) {
		return true
	}
	return s.collapsed()
}

// collapsed reports whether the box is at most a pixel high or wide and
// hides what overflows it.
func (s computedStyle) collapsed() bool {
	clipped := false
	for _, p := range []string{"overflow", "overflow-x", "overflow-y"} {
		if v := s[p]; strings.HasPrefix(v, "hidden") || strings.HasPrefix(v, "clip") {
			clipped = true
		}
	}
	if !clipped {
		return false
	}
	for _, p := range []string{"height", "max-height", "width", "max-width"} {
		if atMostOnePixel(s[p]) {
			return true
		}
	}
	return false
}

// clipsAll reports whether clip or clip-path leaves no visible area:
// rect(0 0 0 0), rect(1px, 1px, 1px, 1px), inset(50%) and more, circle(0).
func clipsAll(clip, clipPath string) bool {
	if args, ok := strings.CutPrefix(clip, "rect("); ok {
		f := strings.FieldsFunc(strings.TrimSuffix(args, ")"), func(r rune) bool { return r == ',' || r == ' ' })
		if len(f) == 4 {
			var v [4]float64
			for i, s := range f {
				l, ok := parseLength(s)
				if !ok {
					return false
				}
				v[i] = l.value
			}
			top, right, bottom, left := v[0], v[1], v[2], v[3]
			return bottom <= top || right <= left
		}
	}
	if args, ok := strings.CutPrefix(clipPath, "inset("); ok {
		if f := strings.Fields(strings.TrimSuffix(args, ")")); len(f) > 0 {
			l, ok := parseLength(f[0])
			return ok && l.unit == "%" && l.value >= 50
		}
	}
	if args, ok := strings.CutPrefix(clipPath, "circle("); ok {
		if f := strings.Fields(strings.TrimSuffix(args, ")")); len(f) > 0 {
			l, ok := parseLength(f[0])
			return ok && l.value <= 0
		}
	}
	return false
}

// with is the style n's children inherit, given n's own computed style.
func (s textStyle) with(style computedStyle) textStyle {
	if style == nil {
		return s
	}
	if v, ok := style["font-size"]; ok {
		s.tinyFont = tinyFontSize(v, s.tinyFont)
	}
	switch style["visibility"] {
	case "hidden", "collapse":
		s.invisible = true
	case "visible":
		s.invisible = false
	}
	if v, ok := style["color"]; ok && v != "inherit" {
		s.color, s.hasColor = parseColor(v)
	}
	bg, ok := style["background-color"]
	if !ok {
		bg, ok = style["background"]
	}
	if ok {
		if c, known := backgroundColor(bg); !known {
			s.hasBackdrop = false
		} else if c.a >= 1 {
			s.backdrop, s.hasBackdrop = c, true
		} else if c.a > 0 {
			s.hasBackdrop = false
		}
	}
	return s
}

// tinyFontSize reports whether a font-size leaves text too small to read:
// zero in any unit or a pixel or less. Relative sizes (em, %) of a tiny
// parent stay tiny; absolute ones reset it.
func tinyFontSize(value string, parentTiny bool) bool {
	l, ok := parseLength(value)
	if !ok {
		// Keywords (small, medium), calc() and var(): a readable size.
		return value == "inherit" && parentTiny
	}
	if l.value <= 0 {
		return true
	}
	switch l.unit {
	case "px", "pt":
		return l.value <= 1
	case "em", "%", "ex", "ch":
		return parentTiny
	}
	return false
}

// pageStyleSheet gathers the simple rules of the page's <style> elements.
func pageStyleSheet(doc *html.Node) *styleSheet {
	sheet := newStyleSheet()
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if c.DataAtom == atom.Style {
				media := strings.ToLower(strings.TrimSpace(attr(c, "media")))
				sheet.add(ownCSS(c), media != "" && media != "all" && media != "screen")
				continue
			}
			if c.DataAtom != atom.Script && c.DataAtom != atom.Template && c.DataAtom != atom.Noscript {
				walk(c)
			}
		}
	}
	walk(doc)
	return sheet
}

func ownCSS(n *html.Node) string {
	if c := n.FirstChild; c != nil && c.NextSibling == nil && c.Type == html.TextNode {
		return c.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func removeAttr(n *html.Node, key string) {
	n.Attr = slices.DeleteFunc(n.Attr, func(a html.Attribute) bool { return a.Key == key })
}
