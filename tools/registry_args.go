package tools

// A tool's checked arguments reach its input struct here. Every call of
// every tool passes through decodeArgs, and the usual input is a URL and
// a number or two, so those are set field by field; anything else (an
// escaped string, a float, a key in another case) goes to the decoder,
// which stays the one authority on what a value means.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// decodeArgs reads checked arguments into a tool's input struct, a
// pointer to a struct.
func decodeArgs(args map[string]json.RawMessage, v any) error {
	if setPlainFields(args, v) {
		return nil
	}
	err := json.Unmarshal(objectOf(args), v)
	if err != nil {
		return &InputError{Message: "The input could not be read: " + jsonProblem(err), Fix: "Check the input against the tool's schema."}
	}
	return nil
}

// setPlainFields sets each argument on its field of the struct v points
// to, as json.Unmarshal would, and reports whether it could: the struct's
// fields are all of built-in string, bool and integer types
// (plainFieldsOf), every key names a field exactly, and every value is
// null, true, false, a decimal integer or a string without escapes in
// valid UTF-8, for a field of that kind. When it reports false, the decoder sets every field again from
// the arguments, so what was set before it gave up does not matter.
func setPlainFields(args map[string]json.RawMessage, v any) bool {
	p := reflect.ValueOf(v)
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return false
	}
	fields := plainFieldsOf(p.Elem().Type())
	if fields == nil {
		return false
	}
	s := p.Elem()
	for key, raw := range args {
		i, ok := fields[key]
		if !ok {
			return false
		}
		if !setPlain(s.Field(i), bytes.TrimSpace(raw)) {
			return false
		}
	}
	return true
}

// setPlain sets one field from its raw value, reporting false where the
// decoder is needed to say what the value means or why it does not fit.
func setPlain(f reflect.Value, raw []byte) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return true // null leaves a field as it is, as the decoder does
	}
	switch f.Kind() {
	case reflect.String:
		text, ok := plainText(raw)
		if !ok {
			return false // escapes to read, or bytes the decoder replaces
		}
		f.SetString(text)
	case reflect.Bool:
		switch string(raw) {
		case "true":
			f.SetBool(true)
		case "false":
			f.SetBool(false)
		default:
			return false
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, f.Type().Bits())
		if err != nil {
			return false // a fraction, an exponent, out of range, or not a number
		}
		f.SetInt(n)
	default:
		return false
	}
	return true
}

// plainFields maps a struct type to its fields by JSON name, or to nil
// when the decoder might read the type in a way setPlain does not: the
// struct or a field with its own unmarshaling, a named type (it may have
// such methods), an embedded struct, the ",string" option, a tag name the
// decoder ignores, two fields of one name.
var plainFields sync.Map // reflect.Type → map[string]int

// plainKinds are the field types setPlain sets: the built-in ones alone,
// which have no methods.
var plainKinds = []reflect.Type{
	reflect.TypeFor[string](), reflect.TypeFor[bool](),
	reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](),
}

func plainFieldsOf(t reflect.Type) map[string]int {
	if m, ok := plainFields.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		m = nil
	}
	for i := range t.NumField() {
		if m == nil {
			break
		}
		f := t.Field(i)
		if f.Anonymous {
			m = nil
			break
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if _, dup := m[name]; dup || !plainTagName(name) || strings.Contains(","+opts+",", ",string,") || !slices.Contains(plainKinds, f.Type) {
			m = nil
			break
		}
		m[name] = i
	}
	plainFields.Store(t, m)
	return m
}

// plainTagName reports whether a tag's name is letters, digits and the
// punctuation encoding/json takes in a name (it uses the Go field's name
// for any other, which setPlain would not match).
func plainTagName(name string) bool {
	for _, c := range name {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) && !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) {
			return false
		}
	}
	return true
}

// objectOf writes fields back as one JSON object for decoding into a
// struct. Every value was read by a JSON decoder, so it is valid as it
// stands: unlike json.Marshal of the map, this neither sorts the keys nor
// compacts each value again.
func objectOf(fields map[string]json.RawMessage) []byte {
	size := 2
	for k, v := range fields {
		size += len(k) + len(v) + 8
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	for k, v := range fields {
		if len(out) > 1 {
			out = append(out, ',')
		}
		key, _ := json.Marshal(k) // a string always encodes
		out = append(out, key...)
		out = append(out, ':')
		if len(bytes.TrimSpace(v)) == 0 {
			v = json.RawMessage("null")
		}
		out = append(out, v...)
	}
	return append(out, '}')
}
