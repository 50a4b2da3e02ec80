package extract

import (
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// This file reads just enough CSS to see how a page hides text: inline
// style attributes and <style> rules whose selectors are simple (tag, .class,
// #id and their compounds such as tag.class). Rules with combinators,
// pseudo-classes or attribute selectors are skipped, and so are at-rules:
// text hidden only under a media query (print, narrow screens) is text
// some reader sees.

// hidingProperties are the properties that can hide text; all others are
// ignored, which keeps the sheet small on pages with large stylesheets.
var hidingProperties = map[string]bool{
	"display": true, "visibility": true, "opacity": true, "content-visibility": true,
	"font-size": true, "color": true, "background": true, "background-color": true,
	"position": true, "left": true, "top": true, "right": true, "margin-left": true,
	"text-indent": true, "clip": true, "clip-path": true, "transform": true,
	"height": true, "max-height": true, "width": true, "max-width": true,
	"overflow": true, "overflow-x": true, "overflow-y": true,
}

// declaration is one "property: value" of a rule or style attribute,
// lower-cased, with !important split off.
type declaration struct {
	property, value string
	important       bool
}

// parseDeclarations reads a declaration block, keeping only the
// hidingProperties.
func parseDeclarations(block string) []declaration {
	var out []declaration
	for part := range strings.SplitSeq(block, ";") {
		name, value, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if !hidingProperties[name] {
			continue
		}
		value = strings.ToLower(strings.TrimSpace(value))
		important := false
		if i := strings.LastIndexByte(value, '!'); i >= 0 && strings.TrimSpace(value[i+1:]) == "important" {
			value, important = strings.TrimSpace(value[:i]), true
		}
		out = append(out, declaration{property: name, value: value, important: important})
	}
	return out
}

// simpleSelector is a compound selector of at most one tag, one id and at
// least one id or class.
type simpleSelector struct {
	tag, id string
	classes []string
}

// parseSimpleSelector accepts ".a", "#b", "tag.a.b", "tag#b.a"; anything
// else (combinators, pseudo-classes, attributes, "*") is refused, and so
// is a bare tag: rules such as "a{color:#fff}" are routinely overridden
// by the complex selectors this package does not read.
func parseSimpleSelector(s string) (simpleSelector, bool) {
	var sel simpleSelector
	s = strings.TrimSpace(s)
	i := identEnd(s, 0)
	sel.tag = strings.ToLower(s[:i])
	for i < len(s) {
		kind := s[i]
		end := identEnd(s, i+1)
		if end == i+1 || (kind != '.' && kind != '#') {
			return simpleSelector{}, false
		}
		name := s[i+1 : end]
		if kind == '#' {
			if sel.id != "" {
				return simpleSelector{}, false
			}
			sel.id = name
		} else {
			sel.classes = append(sel.classes, name)
		}
		i = end
	}
	return sel, sel.id != "" || len(sel.classes) > 0
}

func identEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			i++
			continue
		}
		break
	}
	return i
}

// specificity orders selectors as CSS does: ids, then classes, then tags.
func (sel simpleSelector) specificity() int {
	s := len(sel.classes) * 100
	if sel.id != "" {
		s += 10000
	}
	if sel.tag != "" {
		s++
	}
	return s
}

func (sel simpleSelector) matches(n *html.Node) bool {
	if sel.tag != "" && sel.tag != n.Data {
		return false
	}
	if sel.id != "" && sel.id != attr(n, "id") {
		return false
	}
	classes := strings.Fields(attr(n, "class"))
	for _, c := range sel.classes {
		found := false
		for _, have := range classes {
			if have == c {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

type cssRule struct {
	selector     simpleSelector
	declarations []declaration
	order        int
}

// styleSheet holds a page's simple rules that can hide text, indexed by
// the id or first class their selector needs.
type styleSheet struct {
	byID, byClass map[string][]*cssRule
	rules         int
}

func newStyleSheet() *styleSheet {
	return &styleSheet{byID: map[string][]*cssRule{}, byClass: map[string][]*cssRule{}}
}

// add reads a <style> element's text into the sheet. Rules inside @media
// and @supports blocks, or in a <style> with a media attribute, hold only
// for some readers (print, narrow screens): they are conditional, and
// count only where they show text, never where they hide it.
func (s *styleSheet) add(css string, conditional bool) {
	s.addRules(stripCSSComments(css), conditional)
}

func (s *styleSheet) addRules(css string, conditional bool) {
	for i := 0; i < len(css); {
		open := strings.IndexAny(css[i:], "{;@")
		if open < 0 {
			return
		}
		open += i
		switch css[open] {
		case ';':
			// A stray statement, or the end of "@import ...;".
			i = open + 1
			continue
		case '@':
			next := strings.IndexAny(css[open:], "{;")
			if next < 0 {
				return
			}
			if css[open+next] == ';' {
				i = open + next + 1
				continue
			}
			end := blockEnd(css, open+next)
			// Other at-rules (@font-face, @keyframes, @page) hold no
			// rules for elements.
			if name := strings.ToLower(css[open:min(open+next, open+9)]); strings.HasPrefix(name, "@media") || strings.HasPrefix(name, "@supports") {
				s.addRules(strings.TrimSuffix(css[open+next+1:end], "}"), true)
			}
			i = end
			continue
		}
		end := blockEnd(css, open)
		// Selectors first: most rules of a large stylesheet have none
		// this package reads, and their declarations need no parsing.
		var selectors []simpleSelector
		for selector := range strings.SplitSeq(css[i:open], ",") {
			if sel, ok := parseSimpleSelector(selector); ok {
				selectors = append(selectors, sel)
			}
		}
		if len(selectors) > 0 {
			decls := parseDeclarations(strings.TrimSuffix(css[open+1:end], "}"))
			if conditional {
				decls = slices.DeleteFunc(decls, func(d declaration) bool { return !d.reveals() })
			}
			if len(decls) > 0 {
				for _, sel := range selectors {
					s.addRule(&cssRule{selector: sel, declarations: decls, order: s.rules})
				}
			}
		}
		i = end
	}
}

// reveals reports whether a declaration shows what another may have
// hidden. Colours never count: a conditional colour (a dark theme) cannot
// be weighed against the backdrop it lands on.
func (d declaration) reveals() bool {
	switch v := d.value; d.property {
	case "display":
		return v != "none"
	case "visibility":
		return v == "visible"
	case "opacity":
		l, ok := parseLength(v)
		return ok && l.value > 0.01 && (l.unit == "" || l.unit == "%" && l.value > 1)
	case "content-visibility":
		return v != "hidden"
	case "font-size":
		return !tinyFontSize(v, false)
	case "position":
		return v == "static" || v == "relative" || v == "sticky"
	case "left", "top", "right", "margin-left", "text-indent":
		return !farOffScreen(v)
	case "clip":
		return v == "auto"
	case "clip-path":
		return v == "none"
	case "transform":
		return !rxScaleZero.MatchString(v)
	case "height", "max-height", "width", "max-width":
		return !atMostOnePixel(v)
	case "overflow", "overflow-x", "overflow-y":
		return v == "visible" || v == "auto" || v == "scroll"
	}
	return false
}

func (s *styleSheet) addRule(r *cssRule) {
	s.rules++
	switch {
	case r.selector.id != "":
		s.byID[r.selector.id] = append(s.byID[r.selector.id], r)
	default:
		s.byClass[r.selector.classes[0]] = append(s.byClass[r.selector.classes[0]], r)
	}
}

// matching returns the rules that apply to n. Each rule is indexed once,
// under the first class when it has no id, so a class listed twice on
// an element could find it twice: harmless, the same declarations win.
func (s *styleSheet) matching(n *html.Node) []*cssRule {
	if s.rules == 0 {
		return nil
	}
	var out []*cssRule
	collect := func(rules []*cssRule) {
		for _, r := range rules {
			if r.selector.matches(n) {
				out = append(out, r)
			}
		}
	}
	if id := attr(n, "id"); id != "" {
		collect(s.byID[id])
	}
	for c := range strings.FieldsSeq(attr(n, "class")) {
		collect(s.byClass[c])
	}
	return out
}

// blockEnd returns the index just past the brace that closes the block
// opened at open, or len(css) when it is never closed.
func blockEnd(css string, open int) int {
	depth := 0
	for i := open; i < len(css); i++ {
		switch css[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(css)
}

// stripCSSComments removes /* */ comments and the <!-- --> markers old
// pages wrap their styles in.
func stripCSSComments(css string) string {
	if !strings.Contains(css, "/*") && !strings.Contains(css, "<!--") && !strings.Contains(css, "-->") {
		return css
	}
	var b strings.Builder
	for {
		start := strings.Index(css, "/*")
		if start < 0 {
			b.WriteString(css)
			break
		}
		b.WriteString(css[:start])
		b.WriteByte(' ')
		end := strings.Index(css[start+2:], "*/")
		if end < 0 {
			break
		}
		css = css[start+2+end+2:]
	}
	css = b.String()
	for _, marker := range []string{"<!--", "-->"} {
		if strings.Contains(css, marker) {
			css = strings.ReplaceAll(css, marker, " ")
		}
	}
	return css
}

// computedStyle is the winning value of each hiding property set on one
// element, by CSS's order: !important, then inline over rules, then
// specificity, then source order.
type computedStyle map[string]string

func computeStyle(n *html.Node, sheet *styleSheet) computedStyle {
	rules := sheet.matching(n)
	inline := attr(n, "style")
	if len(rules) == 0 && inline == "" {
		return nil
	}
	style := computedStyle{}
	rank := map[string]int{}
	apply := func(decls []declaration, inline bool, specificity, order int) {
		for _, d := range decls {
			level := 0
			if inline {
				level = 1
			}
			if d.important {
				level += 2
			}
			r := level<<40 | specificity<<20 | order
			if old, ok := rank[d.property]; ok && old > r {
				continue
			}
			rank[d.property] = r
			style[d.property] = d.value
		}
	}
	for _, r := range rules {
		apply(r.declarations, false, r.selector.specificity(), r.order)
	}
	if inline != "" {
		apply(parseDeclarations(inline), true, 0, 1<<20-1)
	}
	return style
}

// cssLength is a parsed length or number: its value and unit ("" for a
// bare number).
type cssLength struct {
	value float64
	unit  string
}

func parseLength(s string) (cssLength, bool) {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && (s[end] == '-' || s[end] == '+' || s[end] == '.' || s[end] >= '0' && s[end] <= '9') {
		end++
	}
	v, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return cssLength{}, false
	}
	return cssLength{value: v, unit: s[end:]}, true
}

// farOffScreen reports whether a length moves content out of any viewport:
// hundreds of pixels (or their em equivalent) or a whole width back.
func farOffScreen(s string) bool {
	l, ok := parseLength(s)
	if !ok {
		return false
	}
	switch l.unit {
	case "px", "pt", "":
		return l.value <= -500
	case "em", "rem":
		return l.value <= -30
	case "%", "vw", "vh":
		return l.value <= -100
	}
	return false
}

// atMostOnePixel reports whether a width or height leaves no room for text.
func atMostOnePixel(s string) bool {
	l, ok := parseLength(s)
	if !ok {
		return false
	}
	if l.value <= 0 {
		return true
	}
	return (l.unit == "px" || l.unit == "pt") && l.value <= 1
}
