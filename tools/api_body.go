package tools

import (
	"encoding/json"
)

// splitObject reads body, when it is exactly one JSON object, into its
// fields, each value the bytes it was sent as, as json.Unmarshal into a
// map[string]json.RawMessage does: the last of a repeated name wins.
// Anything else (not valid JSON, not an object, more than one value)
// reports false, and the decoder reads the body again to say what is
// wrong, in the words it always used.
//
// Why not the decoder every time: every call of a tool over the API
// starts here, and at 10,000 calls a second the decoder's reflection
// over the map (and its own buffer) was a twentieth of the serving
// process's CPU. json.Valid checks the grammar without allocating; after
// it, finding where each value ends needs only strings and nesting.
func splitObject(body []byte) (map[string]json.RawMessage, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return nil, false
	}
	fields := make(map[string]json.RawMessage, 4)
	if i = skipSpace(body, i+1); body[i] == '}' {
		return fields, true
	}
	for {
		end := stringEnd(body, i)
		name, ok := fieldName(body[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(body, skipSpace(body, end)+1) // past the colon
		end = valueEnd(body, i)
		fields[name] = body[i:end:end]
		if i = skipSpace(body, end); body[i] == '}' {
			return fields, true
		}
		i = skipSpace(body, i+1) // past the comma
	}
}

// fieldName is a quoted name as a string. One without escapes and in
// valid UTF-8 is its bytes; any other is left to the decoder, which also
// turns invalid UTF-8 into U+FFFD.
func fieldName(quoted []byte) (string, bool) {
	if name, ok := plainText(quoted); ok {
		return name, true
	}
	var name string
	return name, json.Unmarshal(quoted, &name) == nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just past the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
}

// valueEnd is the index just past the value that starts at b[i], in a
// body json.Valid accepted.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
	}
	return len(b)
}
