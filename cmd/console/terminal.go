package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Text that came from the network (a page's title and text, a URL an
// agent or a redirect chose, a server's error) reaches an admin's
// terminal through `console refusals`, `fetch`, `tool`, `check` and
// `integrations test`. A terminal acts on control sequences in what it
// prints: an OSC 52 sequence writes the clipboard, CSI sequences move the
// cursor and overwrite earlier lines, and bidi overrides reorder what is
// shown. So every such text is printed through safeText or safeLine,
// which show those characters as visible escapes (ESC as \x1b) instead.

// safeText shows s with every control character escaped except newlines
// and tabs, for output that is the text itself (a page, a tool's answer,
// an error's lines).
func safeText(s string) string { return escapeControls(s, true) }

// safeLine shows s on one line: newlines and tabs are escaped too, so a
// value cannot break a table's row or column.
func safeLine(s string) string { return escapeControls(s, false) }

func escapeControls(s string, keepLines bool) string {
	if !needsEscape(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// A stray byte: 0x9b alone is CSI to an 8-bit terminal.
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isTerminalControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return true
		case keepLines && (r == '\n' || r == '\t'):
		case r < 0x20 || r == 0x7f || isTerminalControl(r):
			return true
		}
		i += size
	}
	return false
}

// isTerminalControl is a character beyond ASCII that a terminal acts on
// or that changes how the line around it is shown: the C1 controls
// (U+009B is CSI, U+009D is OSC) and the bidi embeddings, overrides and
// isolates.
func isTerminalControl(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// writeJSON prints v as indented JSON for a terminal. encoding/json
// already writes the C0 controls as \u00XX (ESC as \u001b), but leaves
// DEL, the C1 controls and the bidi characters raw (and HTML escaping is
// off, so that URLs stay readable): those are rewritten as \u escapes,
// which decode to the same string.
func writeJSON(w io.Writer, v any, indent bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if indent {
		enc.SetIndent("", "  ")
	}
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := io.WriteString(w, jsonEscapeControls(buf.String()))
	return err
}

// jsonEscapeControls rewrites DEL, C1 and bidi characters in encoded
// JSON as \u escapes. They can only occur inside strings (JSON's own
// syntax is ASCII), where \u escapes mean the same characters.
func jsonEscapeControls(s string) string {
	var b strings.Builder
	changed := false
	for _, r := range s {
		if r == 0x7f || isTerminalControl(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			changed = true
			continue
		}
		b.WriteRune(r)
	}
	if !changed {
		return s
	}
	return b.String()
}
