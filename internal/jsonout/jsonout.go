// Package jsonout writes the product's hottest JSON by hand: the decision
// line every request logs (internal/app) and the refusal an agent reads in
// the API's answer (tools). Both were written by encoding/json or slog,
// whose reflection and boxing cost several microseconds a request at ten
// thousand requests a second. What it writes, a JSON parser reads exactly
// as it reads encoding/json's output for the same value; the tests decode
// both and compare, field by field, for every field the types have.
package jsonout

import "unicode/utf8"

// AppendStrings appends list as a JSON array, or null for none (as
// encoding/json writes a nil slice).
func AppendStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, ']')
}

// AppendString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, and U+2028
// and U+2029 escaped (valid JSON, but line ends to JavaScript), as slog's
// handler and encoding/json write them. It writes \u0008 and \u000c where
// encoding/json writes \b and \f, and leaves <, > and & as they are, as an
// encoder with SetEscapeHTML(false) does: a JSON parser reads both alike.
func AppendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	from := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[from:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			from = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[from:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[from:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		from = i
	}
	b = append(b, s[from:]...)
	return append(b, '"')
}
