package tools

import (
	"strings"
	"unicode/utf8"
)

// part is one slice of a page's text, counted in characters (runes), so
// that a part never splits a UTF-8 character and the numbers the agent
// sees match what it can count.
type part struct {
	text       string
	start, end int // in characters
	total      int
}

// cutPart returns the characters [start, start+size) of text, ending the
// part at a paragraph or line break, or else a space, when one is near the
// end, so that the agent does not read half a sentence. total is text's
// length in characters.
func cutPart(text string, total, start, size int) part {
	if start >= total {
		return part{start: total, end: total, total: total}
	}
	from := byteOffset(text, 0, start)
	end := start + size
	if end >= total {
		return part{text: text[from:], start: start, end: total, total: total}
	}
	to := byteOffset(text, from, size)
	window := text[from:to]
	// Look back over the last fifth of the part for a good place to stop.
	floor := len(window) * 4 / 5
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(window, sep); i >= floor {
			cut := i + len(sep)
			return part{text: window[:cut], start: start, end: start + utf8.RuneCountInString(window[:cut]), total: total}
		}
	}
	return part{text: window, start: start, end: end, total: total}
}

// byteOffset returns the byte offset n characters after byte offset from.
func byteOffset(s string, from, n int) int {
	i := from
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}
