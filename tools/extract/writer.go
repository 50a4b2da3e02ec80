package extract

import (
	"strings"
	"unicode"
)

// textWriter builds Markdown-like text from a stream of words, raw text and
// block boundaries. It collapses whitespace the way a browser does, never
// emits more than one blank line in a row, and starts every line with the
// current indentation (for nested lists and quotes) so the structure of the
// page survives in plain text.
type textWriter struct {
	b strings.Builder
	// prefixes are the line prefixes of the enclosing blocks, outermost first.
	prefixes []string
	// marker, if set, replaces the innermost prefix on the next line
	// start: it is the "- " of a list item whose continuation lines are
	// indented instead.
	marker string
	// newlines is the number of line breaks owed before the next text.
	newlines int
	// space is true when a collapsed space is owed before the next word.
	space bool
	// lineStart is true when nothing has been written on the current line.
	lineStart bool
	// open is inline syntax ("[", "`", "## ") owed before the next word.
	// It is written lazily so an element without text leaves no trace.
	open string
	// sep is a cell separator owed before the next word of a table row.
	sep string
	// words counts the words written, so a caller can tell whether an
	// element produced any text.
	words int
}

func newTextWriter() *textWriter { return &textWriter{lineStart: true} }

// breakLines asks for n line breaks (1 = new line, 2 = blank line) before
// the next text. Breaks never accumulate beyond the largest request, and
// are dropped at the start of the output.
func (w *textWriter) breakLines(n int) {
	if w.b.Len() == 0 {
		return
	}
	w.newlines = max(w.newlines, n)
	w.space = false
	w.sep = ""
}

// pushPrefix indents the following lines; marker is written instead of the
// prefix on the first of them.
func (w *textWriter) pushPrefix(prefix, marker string) {
	w.prefixes = append(w.prefixes, prefix)
	w.marker = marker
}

func (w *textWriter) popPrefix() {
	w.prefixes = w.prefixes[:len(w.prefixes)-1]
	w.marker = ""
}

// flush writes owed line breaks and the line prefix.
func (w *textWriter) flush() {
	if w.newlines > 0 {
		// Blank lines keep the prefix's marks ("> ") but not its
		// indentation, so a quote stays one quote.
		w.b.WriteByte('\n')
		for range w.newlines - 1 {
			w.writeBlankPrefix()
			w.b.WriteByte('\n')
		}
		w.newlines = 0
		w.lineStart = true
		w.space = false
	}
	if w.lineStart {
		w.writePrefix()
		w.lineStart = false
		w.space = false
	}
}

func (w *textWriter) writePrefix() {
	last := len(w.prefixes) - 1
	for i, p := range w.prefixes {
		if i == last && w.marker != "" {
			p, w.marker = w.marker, ""
		}
		w.b.WriteString(p)
	}
}

func (w *textWriter) writeBlankPrefix() {
	var line strings.Builder
	for _, p := range w.prefixes {
		line.WriteString(p)
	}
	w.b.WriteString(strings.TrimRight(line.String(), " "))
}

// text writes inline text, collapsing runs of whitespace to one space.
func (w *textWriter) text(s string) {
	for s != "" {
		i := strings.IndexFunc(s, isCollapsible)
		if i != 0 {
			word := s
			if i > 0 {
				word = s[:i]
			}
			w.word(word)
			if i < 0 {
				return
			}
		}
		s = s[i:]
		j := strings.IndexFunc(s, func(r rune) bool { return !isCollapsible(r) })
		if !w.lineStart && w.newlines == 0 {
			w.space = true
		}
		if j < 0 {
			return
		}
		s = s[j:]
	}
}

// isCollapsible reports whitespace that collapses to one space. Unlike a
// browser, no-break spaces collapse too: pages use runs of them for
// indentation and spacers, which are noise in plain text.
func isCollapsible(r rune) bool { return unicode.IsSpace(r) }

// word writes s (which contains no collapsible whitespace) inline.
func (w *textWriter) word(s string) {
	w.flush()
	switch {
	case w.sep != "":
		w.b.WriteString(w.sep)
		w.sep = ""
	case w.space:
		w.b.WriteByte(' ')
	}
	w.space = false
	w.b.WriteString(w.open)
	w.open = ""
	w.b.WriteString(s)
	w.words++
}

// after writes s right after the last word written, before any space or
// line break owed since: a link's marker stays on its words' line.
func (w *textWriter) after(s string) { w.b.WriteString(s) }

// openInline owes s (such as "[") before the next word.
func (w *textWriter) openInline(s string) { w.open += s }

// closeInline ends an inline span opened with opener by writing s (such as
// "](url)") right after its last word. It reports false, writing nothing,
// when the span got no text: then the opener is taken back instead.
func (w *textWriter) closeInline(opener, s string) bool {
	if w.open != "" && strings.HasSuffix(w.open, opener) {
		w.open = strings.TrimSuffix(w.open, opener)
		return false
	}
	w.b.WriteString(s)
	return true
}

// separate owes a cell separator before the next word on this line. Empty
// cells between two full ones still show, as "a | | b", so columns line up.
func (w *textWriter) separate(s string) {
	if w.b.Len() > 0 && !w.lineStart && w.newlines == 0 {
		w.sep = strings.TrimSuffix(w.sep, " ") + s
	}
}

// raw writes preformatted text verbatim, keeping the line prefix of
// enclosing lists and quotes on every line.
func (w *textWriter) raw(s string) {
	for {
		line, rest, more := strings.Cut(s, "\n")
		if line != "" {
			w.flush()
			w.b.WriteString(line)
		}
		if !more {
			return
		}
		w.flush()
		w.b.WriteByte('\n')
		w.lineStart = true
		s = rest
	}
}

func (w *textWriter) String() string { return w.b.String() }
